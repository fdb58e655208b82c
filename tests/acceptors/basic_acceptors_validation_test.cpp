// acceptor.exact, acceptor.bias and acceptor.tolerance: an invalid call gives a
// status naming the plugin (never a crash, never a moved random stream), and
// their parameter schemas are enforced with positions by the pipeline loader.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "acceptor_harness.h"
#include "basic_acceptors_support.h"
#include "diagnostic.h"
#include "pipeline_config.h"
#include "plugin_instance.h"
#include "status_object.h"

namespace cadenza::test::basic {
namespace {

// Calls the plugin's vtable directly, to hand it inputs the harness would
// refuse to build (NULL pointers, negative sizes).
class RawAcceptor {
public:
    explicit RawAcceptor(const std::string& plugin)
        : config_(load_pipeline_config_string("[acceptor]\n" + table_of(plugin), "acceptor.toml",
                                              std::filesystem::current_path())),
          instance_(std::make_unique<PluginInstance>(*config_.stage("acceptor"), "cpu", 1)) {}

    struct Outcome {
        bool ok;
        cdz_status_code code;
        std::string message;
    };

    Outcome call(const cdz_accept_input* in, cdz_accept_output* out) const {
        cdz_status* status = instance_->vtable<cdz_acceptor_vtable>().accept(instance_->context(), in, out);
        if (!status) return {true, CDZ_STATUS_OK, ""};
        Outcome outcome{false, status->code, status->message};
        status_release(status);
        return outcome;
    }

private:
    PipelineConfig config_;
    std::unique_ptr<PluginInstance> instance_;
};

// A valid call the tests then break one field at a time.
struct Call {
    int64_t vocab = 4;
    std::vector<int32_t> tokens = {1, 2, 3};
    std::vector<int32_t> parents = {-1, 0, -1};
    std::vector<float> target = std::vector<float>(16, 0.25f);
    std::vector<float> draft = std::vector<float>(12, 0.25f);
    std::vector<int32_t> nodes = std::vector<int32_t>(3, -1);
    std::vector<int32_t> emitted = std::vector<int32_t>(4, -1);
    cdz_sampling sampling = AcceptorHarness::default_sampling();
    cdz_token_tree tree{};
    cdz_accept_input in{};
    cdz_accept_output out{};

    Call() { rebuild(); }
    void rebuild() {
        tree = {sizeof(cdz_token_tree), static_cast<int32_t>(tokens.size()), 1, tokens.data(), parents.data()};
        in.struct_size = sizeof(cdz_accept_input);
        in.tree = &tree;
        in.vocab_size = vocab;
        in.target_probabilities = target.data();
        in.draft_probabilities = draft.data();
        in.sampling = &sampling;
        out = {sizeof(cdz_accept_output), nodes.data(), 0, emitted.data(), 0, static_cast<int32_t>(nodes.size()),
               static_cast<int32_t>(emitted.size())};
    }
};

class BasicAcceptorValidation : public ::testing::TestWithParam<const char*> {};

TEST_P(BasicAcceptorValidation, InvalidCallsReturnAStatusNamingThePlugin) {
    const std::string plugin = GetParam();
    const RawAcceptor acceptor(plugin);
    const bool uses_draft = plugin != "acceptor.tolerance";

    struct Breakage {
        const char* what;
        std::function<void(Call&)> apply;
        cdz_status_code code;
        const char* fragment;  // expected in the message
    };
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<Breakage> breakages = {
        {"NULL tree", [](Call& c) { c.in.tree = nullptr; }, CDZ_STATUS_INVALID_ARGUMENT, "tree"},
        {"zero vocabulary", [](Call& c) { c.in.vocab_size = 0; }, CDZ_STATUS_INVALID_ARGUMENT, "vocabulary"},
        {"negative vocabulary", [](Call& c) { c.in.vocab_size = -3; }, CDZ_STATUS_INVALID_ARGUMENT, "vocabulary"},
        {"NULL target", [](Call& c) { c.in.target_probabilities = nullptr; }, CDZ_STATUS_INVALID_ARGUMENT, "target"},
        {"NULL tokens", [](Call& c) { c.tree.tokens = nullptr; }, CDZ_STATUS_INVALID_ARGUMENT, "NULL"},
        {"NULL parents", [](Call& c) { c.tree.parents = nullptr; }, CDZ_STATUS_INVALID_ARGUMENT, "NULL"},
        {"negative node count", [](Call& c) { c.tree.node_count = -1; }, CDZ_STATUS_INVALID_ARGUMENT, "node count"},
        {"parent not earlier", [](Call& c) { c.parents[1] = 1; }, CDZ_STATUS_INVALID_ARGUMENT, "node 1 has parent 1"},
        {"parent after the node", [](Call& c) { c.parents[0] = 2; }, CDZ_STATUS_INVALID_ARGUMENT, "node 0 has parent 2"},
        {"parent below -1", [](Call& c) { c.parents[2] = -2; }, CDZ_STATUS_INVALID_ARGUMENT, "node 2 has parent -2"},
        {"token = vocab", [](Call& c) { c.tokens[2] = 4; }, CDZ_STATUS_INVALID_ARGUMENT, "node 2 has token 4"},
        {"negative token", [](Call& c) { c.tokens[0] = -1; }, CDZ_STATUS_INVALID_ARGUMENT, "node 0 has token -1"},
        {"two codebooks", [](Call& c) { c.tree.tokens_per_node = 2; }, CDZ_STATUS_UNSUPPORTED, "tokens_per_node"},
        {"NULL accepted_nodes", [](Call& c) { c.out.accepted_nodes = nullptr; }, CDZ_STATUS_INVALID_ARGUMENT, "NULL"},
        {"NULL emitted_tokens", [](Call& c) { c.out.emitted_tokens = nullptr; }, CDZ_STATUS_INVALID_ARGUMENT, "NULL"},
        {"no room for the path", [](Call& c) { c.out.accepted_capacity = 2; }, CDZ_STATUS_INVALID_ARGUMENT, "room for 2"},
        {"no room for the tokens", [](Call& c) { c.out.emitted_capacity = 3; }, CDZ_STATUS_INVALID_ARGUMENT, "room for"},
        {"NaN in row 0", [nan](Call& c) { c.target[1] = nan; }, CDZ_STATUS_INVALID_ARGUMENT, "row 0"},
        {"negative entry in row 0", [](Call& c) { c.target[1] = -0.5f; }, CDZ_STATUS_INVALID_ARGUMENT, "row 0"},
        {"row 0 without mass", [](Call& c) { std::fill(c.target.begin(), c.target.begin() + 4, 0.0f); },
         CDZ_STATUS_INVALID_ARGUMENT, "row 0"},
        {"small input struct", [](Call& c) { c.in.struct_size = 8; }, CDZ_STATUS_INVALID_ARGUMENT, "struct"},
    };
    if (uses_draft)
        breakages.push_back({"draft row without mass", [](Call& c) { std::fill(c.draft.begin(), c.draft.begin() + 4, 0.0f); },
                             CDZ_STATUS_INVALID_ARGUMENT, "draft row 0"});

    for (const Breakage& breakage : breakages) {
        Call call;
        breakage.apply(call);
        const auto outcome = acceptor.call(&call.in, &call.out);
        ASSERT_FALSE(outcome.ok) << breakage.what;
        EXPECT_EQ(outcome.code, breakage.code) << breakage.what << ": " << outcome.message;
        EXPECT_EQ(outcome.message.rfind(plugin + ":", 0), 0u) << breakage.what << ": " << outcome.message;
        EXPECT_NE(outcome.message.find(breakage.fragment), std::string::npos)
            << breakage.what << ": " << outcome.message;
        EXPECT_EQ(call.out.emitted_count, 0) << breakage.what;
    }
    {
        Call call;
        EXPECT_FALSE(acceptor.call(nullptr, &call.out).ok);
        EXPECT_FALSE(acceptor.call(&call.in, nullptr).ok);
    }
    // The instance still works after all that.
    Call call;
    const auto outcome = acceptor.call(&call.in, &call.out);
    EXPECT_TRUE(outcome.ok) << outcome.message;
    EXPECT_EQ(call.out.emitted_count, call.out.accepted_count + 1);
}

TEST_P(BasicAcceptorValidation, EmptyTreeAsTheEngineSendsIt) {
    // node_count 0 with NULL tokens, parents and accepted_nodes.
    const RawAcceptor acceptor(GetParam());
    Call call;
    call.tree = {sizeof(cdz_token_tree), 0, 1, nullptr, nullptr};
    call.in.draft_probabilities = nullptr;
    call.out.accepted_nodes = nullptr;
    const auto outcome = acceptor.call(&call.in, &call.out);
    ASSERT_TRUE(outcome.ok) << outcome.message;
    EXPECT_EQ(call.out.accepted_count, 0);
    ASSERT_EQ(call.out.emitted_count, 1);
    EXPECT_GE(call.emitted[0], 0);
    EXPECT_LT(call.emitted[0], 4);
}

TEST_P(BasicAcceptorValidation, InvalidInputThroughTheHarnessThrowsNotCrashes) {
    const AcceptorHarness harness(table_of(GetParam()));
    const std::vector<float> target(12, 0.25f), draft(8, 0.25f);
    EXPECT_THROW(harness.accept({0, 9}, {-1, 0}, 4, target, draft), Error);  // token outside the vocabulary
    EXPECT_THROW(harness.accept({0, 1}, {-1, 5}, 4, target, draft), Error);  // parent out of order
    EXPECT_THROW(harness.accept({0, 1}, {-1, 0}, 4, {}, draft), Error);      // no target
    try {
        harness.accept({0, 1}, {1, -1}, 4, target, draft);
        FAIL() << "expected an error";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), CDZ_STATUS_INVALID_ARGUMENT);
        EXPECT_NE(std::string(error.what()).find(GetParam()), std::string::npos) << error.what();
    }
    EXPECT_NO_THROW(harness.accept({0, 1}, {-1, 0}, 4, target, draft));
}

INSTANTIATE_TEST_SUITE_P(Plugins, BasicAcceptorValidation,
                         ::testing::Values("acceptor.exact", "acceptor.bias", "acceptor.tolerance"),
                         [](const ::testing::TestParamInfo<const char*>& info) {
                             return std::string(info.param).substr(std::string("acceptor.").size());
                         });

// The schema errors of a table, as the pipeline loader reports them.
std::vector<Diagnostic> schema_errors(const std::string& table) {
    try {
        AcceptorHarness harness(table);
    } catch (const ValidationError& error) {
        return error.diagnostics();
    }
    return {};
}

::testing::AssertionResult has_error_at(const std::vector<Diagnostic>& errors, uint32_t line,
                                        const std::string& fragment) {
    for (const Diagnostic& error : errors)
        if (error.line == line && error.column > 0 && error.message.find(fragment) != std::string::npos)
            return ::testing::AssertionSuccess();
    auto failure = ::testing::AssertionFailure() << "no error on line " << line << " mentioning '" << fragment
                                                 << "'; got:";
    for (const Diagnostic& error : errors) failure << "\n  " << error.to_string();
    return failure;
}

// Line 1 is "[acceptor]", line 2 the plugin, line 3 the parameter.
TEST(BasicAcceptorSchemas, OutOfRangeAndMistypedParametersAreRejectedWithPositions) {
    EXPECT_TRUE(has_error_at(schema_errors(table_of("acceptor.bias", "beta = 2\n")), 3, "beta"));
    EXPECT_TRUE(has_error_at(schema_errors(table_of("acceptor.bias", "beta = -0.1\n")), 3, "beta"));
    EXPECT_TRUE(has_error_at(schema_errors(table_of("acceptor.bias", "beta = \"high\"\n")), 3, "beta"));
    EXPECT_TRUE(has_error_at(schema_errors(table_of("acceptor.tolerance", "tau = 0\n")), 3, "tau"));
    EXPECT_TRUE(has_error_at(schema_errors(table_of("acceptor.tolerance", "tau = 1025\n")), 3, "tau"));
    EXPECT_TRUE(has_error_at(schema_errors(table_of("acceptor.tolerance", "tau = 2.5\n")), 3, "tau"));
    // acceptor.exact has one parameter, a choice.
    EXPECT_TRUE(has_error_at(schema_errors(table_of("acceptor.exact", "beta = 0.1\n")), 3, "beta"));
    EXPECT_TRUE(has_error_at(schema_errors(table_of("acceptor.exact", "verification = \"blocks\"\n")), 3,
                             "verification"));
    EXPECT_TRUE(has_error_at(schema_errors(table_of("acceptor.exact", "verification = 1\n")), 3, "verification"));
    // The bounds themselves are valid.
    EXPECT_TRUE(schema_errors(table_of("acceptor.bias", "beta = 0\n")).empty());
    EXPECT_TRUE(schema_errors(table_of("acceptor.bias", "beta = 1\n")).empty());
    EXPECT_TRUE(schema_errors(table_of("acceptor.tolerance", "tau = 1\n")).empty());
    EXPECT_TRUE(schema_errors(table_of("acceptor.tolerance", "tau = 64\n")).empty());
    EXPECT_TRUE(schema_errors(table_of("acceptor.exact", "verification = \"block\"\n")).empty());
    EXPECT_TRUE(schema_errors(table_of("acceptor.exact", "verification = \"token\"\n")).empty());
}

}  // namespace
}  // namespace cadenza::test::basic
