// A backbone's cache after a tree step and a commit must give the same logits
// as evaluating the committed sequence from scratch. Shown on the test
// double test.markov_backbone, whose cache works like a real one.
#include <gtest/gtest.h>

#include <numeric>

#include "managed_tensor.h"
#include "pipeline_config.h"
#include "plugin_instance.h"
#include "status_object.h"
#include "test_fixtures.h"

namespace cadenza {
namespace {

class Backbone {
public:
    Backbone()
        : config_(load_pipeline_config_string("[backbone]\nplugin = \"test.markov_backbone\"\n", "kv.toml",
                                              test::source_dir(), {{test::test_plugin_dir("doubles"), "test", true}})),
          instance_(*config_.stage("backbone"), "cpu", 0) {}

    const cdz_backbone_vtable& vtable() const { return instance_.vtable<cdz_backbone_vtable>(); }

    void* new_session() {
        void* session = nullptr;
        throw_if_error(vtable().session_create(instance_.context(), 256, &session), "session_create");
        return session;
    }

    // Logits [nodes, vocab] of one forward pass.
    std::vector<float> forward(void* session, const std::vector<int32_t>& tokens, const std::vector<int32_t>& parents) {
        cdz_token_tree tree{sizeof(cdz_token_tree), static_cast<int32_t>(tokens.size()), 1, tokens.data(), parents.data()};
        cdz_backbone_output out{sizeof(cdz_backbone_output), nullptr, nullptr};
        throw_if_error(vtable().session_forward(session, &tree, 0, &out), "forward");
        ManagedTensor logits(out.logits);
        const auto shape = logits.expect(kDLFloat, 32, 2, "logits");
        vocab_ = shape[1];
        return std::vector<float>(logits.data<float>(), logits.data<float>() + shape[0] * shape[1]);
    }

    std::vector<float> chain(void* session, const std::vector<int32_t>& tokens) {
        std::vector<int32_t> parents(tokens.size());
        std::iota(parents.begin(), parents.end(), -1);
        return forward(session, tokens, parents);
    }

    void commit(void* session, const std::vector<int32_t>& path) {
        throw_if_error(vtable().session_commit(session, path.data(), static_cast<int32_t>(path.size())), "commit");
    }

    std::vector<float> row(const std::vector<float>& logits, int64_t r) const {
        return std::vector<float>(logits.begin() + r * vocab_, logits.begin() + (r + 1) * vocab_);
    }

private:
    PipelineConfig config_;
    PluginInstance instance_;
    int64_t vocab_ = 0;
};

TEST(KvCompaction, ATreeStepAndCommitEqualsRecomputingThePrefix) {
    Backbone backbone;
    void* stepped = backbone.new_session();
    void* fresh = backbone.new_session();

    // Prefix, then a tree: x has children y and z; z has child w; y has child u.
    backbone.chain(stepped, {3, 17, 128});
    backbone.commit(stepped, {0, 1, 2});
    const std::vector<int32_t> tokens{135, 140, 151, 133, 160};  // x, y, z, u, w
    const std::vector<int32_t> parents{-1, 0, 0, 1, 2};
    const auto tree_logits = backbone.forward(stepped, tokens, parents);
    backbone.commit(stepped, {0, 2, 4});  // keep x, z, w; drop y and u
    int64_t length = 0;
    throw_if_error(backbone.vtable().session_length(stepped, &length), "length");
    EXPECT_EQ(length, 6);
    const auto next_after_compaction = backbone.chain(stepped, {141});

    const auto from_scratch = backbone.chain(fresh, {3, 17, 128, 135, 151, 160, 141});
    EXPECT_EQ(backbone.row(next_after_compaction, 0), backbone.row(from_scratch, 6));
    // The tree's own rows match the sequence's rows for the kept nodes.
    EXPECT_EQ(backbone.row(tree_logits, 0), backbone.row(from_scratch, 3));
    EXPECT_EQ(backbone.row(tree_logits, 2), backbone.row(from_scratch, 4));
    EXPECT_EQ(backbone.row(tree_logits, 4), backbone.row(from_scratch, 5));
    // A dropped branch saw a different context.
    EXPECT_NE(backbone.row(tree_logits, 1), backbone.row(from_scratch, 4));

    backbone.vtable().session_destroy(stepped);
    backbone.vtable().session_destroy(fresh);
}

TEST(KvCompaction, ACommitThatIsNotAPathIsRefused) {
    Backbone backbone;
    void* session = backbone.new_session();
    backbone.forward(session, {135, 140, 151}, {-1, 0, 0});
    const std::vector<int32_t> siblings{1, 2};
    cdz_status* status = backbone.vtable().session_commit(session, siblings.data(), 2);
    ASSERT_NE(status, nullptr);
    status_release(status);
    backbone.vtable().session_destroy(session);
}

}  // namespace
}  // namespace cadenza
