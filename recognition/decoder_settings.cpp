#include "decoder_settings.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace cadenza::recognition {
namespace {

enum class Kind { positive_real, probability, integer, yes_no };

struct Setting {
    const char* name;
    Kind kind;
    long minimum;  // integers: the smallest accepted value
    const char* meaning;
};

// Ranges probed against Debian's pocketsphinx 0.8+5prealpha: outside them it
// aborts, crashes or divides by zero (or the value means nothing).
const Setting settings[] = {
    {"lw", Kind::positive_real, 0, "language model weight"},
    {"fwdflatlw", Kind::positive_real, 0, "language model weight of the flat pass"},
    {"bestpathlw", Kind::positive_real, 0, "language model weight of the best path"},
    {"wip", Kind::positive_real, 0, "word insertion penalty"},
    {"pip", Kind::positive_real, 0, "phone insertion penalty"},
    {"nwpen", Kind::positive_real, 0, "new word penalty"},
    {"ascale", Kind::positive_real, 0, "acoustic scale of the posteriors"},
    {"silprob", Kind::probability, 0, "silence probability"},
    {"fillprob", Kind::probability, 0, "filler probability"},
    {"beam", Kind::probability, 0, "beam"},
    {"wbeam", Kind::probability, 0, "word-exit beam"},
    {"pbeam", Kind::probability, 0, "phone-transition beam"},
    {"lpbeam", Kind::probability, 0, "last-phone beam"},
    {"lponlybeam", Kind::probability, 0, "last-phone-only beam"},
    {"fwdflatbeam", Kind::probability, 0, "beam of the flat pass"},
    {"fwdflatwbeam", Kind::probability, 0, "word-exit beam of the flat pass"},
    {"maxhmmpf", Kind::integer, 1, "most HMMs searched per frame"},
    {"maxwpf", Kind::integer, 1, "most words searched per frame"},
    {"topn", Kind::integer, 1, "Gaussians kept per frame"},
    {"ds", Kind::integer, 1, "frame downsampling"},
    {"pl_window", Kind::integer, 0, "phone lookahead window"},
    {"bestpath", Kind::yes_no, 0, "a best-path search after the flat pass"},
    {"fwdflat", Kind::yes_no, 0, "the flat second pass"},
    {"fwdtree", Kind::yes_no, 0, "the tree first pass"},
};

std::string names() {
    std::string text;
    for (const auto& setting : settings) text += (text.empty() ? "" : ", ") + std::string(setting.name);
    return text;
}

}  // namespace

void check_decoder_setting(const std::string& given_name, const std::string& value) {
    const std::string name = !given_name.empty() && given_name[0] == '-' ? given_name.substr(1) : given_name;
    const Setting* setting = nullptr;
    for (const auto& candidate : settings)
        if (name == candidate.name) setting = &candidate;
    if (!setting) throw std::invalid_argument("decoder setting '" + name + "' is not one cadenza passes on (" + names() + ")");
    const std::string what = "decoder setting " + name + " (" + setting->meaning + ") = '" + value + "'";
    if (setting->kind == Kind::yes_no) {
        if (value != "yes" && value != "no") throw std::invalid_argument(what + ": expected yes or no");
        return;
    }
    char* end = nullptr;
    errno = 0;
    if (setting->kind == Kind::integer) {
        const long number = value.empty() ? 0 : std::strtol(value.c_str(), &end, 10);
        if (value.empty() || *end != '\0' || errno == ERANGE || number > 1000000000L)
            throw std::invalid_argument(what + ": expected an integer");
        if (number < setting->minimum && !(number == -1 && setting->minimum == 1 && name.rfind("max", 0) == 0))
            throw std::invalid_argument(what + ": must be at least " + std::to_string(setting->minimum) +
                                        (name.rfind("max", 0) == 0 ? " (or -1, no limit)" : ""));
        return;
    }
    const double number = value.empty() ? 0 : std::strtod(value.c_str(), &end);
    if (value.empty() || *end != '\0' || !std::isfinite(number)) throw std::invalid_argument(what + ": expected a number");
    if (!(number > 0)) throw std::invalid_argument(what + ": must be positive");
    if (setting->kind == Kind::probability && number > 1) throw std::invalid_argument(what + ": must be at most 1");
}

}  // namespace cadenza::recognition
