// Messages that quote user input stay printable and bounded (reliability
// issue, finding 12).
#include <gtest/gtest.h>

#include "printable_text.h"
#include "status_object.h"

namespace cadenza {
namespace {

TEST(PrintableText, ControlCharactersAndNulBecomeEscapes) {
    const std::string nul_inside("acc\0eptor", 9);
    EXPECT_EQ(printable_text(nul_inside), "acc\\x00eptor");
    EXPECT_EQ(printable_text("a\x1b[31mred\x7f"), "a\\x1b[31mred\\x7f");
    EXPECT_EQ(printable_text("line one\n\tline two"), "line one\n\tline two");
    EXPECT_EQ(printable_text("caf\xc3\xa9"), "caf\xc3\xa9");  // UTF-8 is left alone
}

TEST(PrintableText, OverlongLinesAndManyLinesAreCut) {
    const std::string long_line(800000, 'x');
    const std::string cut = printable_text("start\n" + long_line + "\nend");
    EXPECT_LT(cut.size(), 2100u);
    EXPECT_NE(cut.find("... (798000 more bytes)\nend"), std::string::npos) << cut.substr(cut.size() - 60);
    std::string many;
    for (int i = 0; i < 1000; ++i) many += "line\n";
    EXPECT_NE(printable_text(many).find("more lines)"), std::string::npos);
}

TEST(PrintableText, AStatusMessageIsPrintable) {
    const std::string message("no plugin named 'a\0b'", 21);
    cdz_status* status = status_create(CDZ_STATUS_NOT_FOUND, message.c_str());
    EXPECT_EQ(status->message, "no plugin named 'a");  // a C string ends at its NUL
    status_release(status);
    status = status_create(CDZ_STATUS_NOT_FOUND, "bell\a");
    EXPECT_EQ(status->message, "bell\\x07");
    status_release(status);
}

}  // namespace
}  // namespace cadenza
