// Statuses a plugin returns become cadenza::Error with the host's context.
#include <gtest/gtest.h>

#include "error.h"
#include "status_object.h"

namespace cadenza {
namespace {

std::string thrown(cdz_status* status, const std::string& context) {
    try {
        throw_if_error(status, context);
    } catch (const Error& e) {
        EXPECT_EQ(e.code(), CDZ_STATUS_INVALID_CONFIG);
        return e.what();
    }
    ADD_FAILURE() << "nothing thrown";
    return "";
}

TEST(StatusObject, APluginIsNamedOnceWhetherOrNotItsMessageNamesIt) {
    const auto status = [](const char* message) { return status_create(CDZ_STATUS_INVALID_CONFIG, message); };
    EXPECT_EQ(thrown(status("example.lookup_drafter: ngram_min (4) is larger than ngram_max (2)"),
                     "[draft] example.lookup_drafter"),
              "[draft] example.lookup_drafter: ngram_min (4) is larger than ngram_max (2)");
    EXPECT_EQ(thrown(status("draft.mtp: the input is NULL"), "draft.mtp: propose"),
              "draft.mtp: propose: the input is NULL");
    EXPECT_EQ(thrown(status("the input is NULL"), "draft.mtp: propose"), "draft.mtp: propose: the input is NULL");
    // Another plugin's name, or the name without its colon, is the message's own.
    EXPECT_EQ(thrown(status("draft.mtp2: x"), "draft.mtp: propose"), "draft.mtp: propose: draft.mtp2: x");
    EXPECT_EQ(thrown(status("draft.mtp"), "draft.mtp"), "draft.mtp: draft.mtp");
    EXPECT_EQ(thrown(status("bare"), ""), "bare");
    EXPECT_NO_THROW(throw_if_error(nullptr, "draft.mtp"));
}

}  // namespace
}  // namespace cadenza
