// The text a synthesis accepts (reliability issue, findings 10 and 12).
#include <gtest/gtest.h>

#include "error.h"
#include "text_to_speak.h"

namespace cadenza {
namespace {

TEST(TextToSpeak, TextWithoutALetterOrDigitIsRefused) {
    for (const std::string text : {"", " \n\t", "...", "?!", "\u2014 \u201c\u201d", "\U0001F600\U0001F389",
                                   "\U0001F468\u200D\U0001F469", "\xff\xfe"})
        EXPECT_THROW(check_text_to_speak(text, 1024), Error) << text;
}

TEST(TextToSpeak, AnyScriptsLettersOrDigitsAreSomethingToSay) {
    for (const std::string text : {"Hi.", "3", " a ", "\u00e9t\u00e9", "\u65e5\u672c", "\u041f\u0440\u0438\u0432\u0435\u0442",
                                   "\U0001F600 ok", "\u0645\u0631\u062d\u0628\u0627"})
        EXPECT_NO_THROW(check_text_to_speak(text, 1024)) << text;
}

TEST(TextToSpeak, TextFarLongerThanTheBackboneHoldsIsRefusedBeforeTheFrontend) {
    const std::string long_text(8 * 1024 + 1, 'a');
    try {
        check_text_to_speak(long_text, 1024);
        FAIL();
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("8193 bytes"), std::string::npos) << e.what();
    }
    EXPECT_NO_THROW(check_text_to_speak(long_text.substr(1), 1024));
    EXPECT_NO_THROW(check_text_to_speak(long_text, 0));  // no bound known
}

}  // namespace
}  // namespace cadenza
