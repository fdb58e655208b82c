#include "status_object.h"

#include <memory>
#include <string_view>

#include "printable_text.h"

namespace cadenza {
namespace {
cdz_status out_of_memory_status{CDZ_STATUS_OUT_OF_MEMORY, "out of memory"};
}

cdz_status* status_create(cdz_status_code code, const char* message) noexcept {
    try {
        return new cdz_status{code, message ? printable_text(message) : std::string()};
    } catch (...) {
        return &out_of_memory_status;
    }
}

void status_release(cdz_status* status) noexcept {
    if (status != &out_of_memory_status) delete status;
}

void throw_if_error(cdz_status* status, const std::string& context) {
    if (!status) return;
    std::unique_ptr<cdz_status, decltype(&status_release)> owned(status, status_release);
    if (context.empty()) throw Error(owned->code, owned->message);
    // The context names the plugin first ("[draft] draft.mtp", "draft.mtp:
    // propose"); a plugin that starts its message with its own name, as the
    // SDK's guard does, is not named twice.
    const std::string head = context.substr(0, context.find(": "));
    const std::string name = head.substr(head.find_last_of(' ') == std::string::npos ? 0 : head.find_last_of(' ') + 1);
    std::string_view message = owned->message;
    if (!name.empty() && message.size() > name.size() + 2 && message.compare(0, name.size(), name) == 0 &&
        message.compare(name.size(), 2, ": ") == 0)
        message.remove_prefix(name.size() + 2);
    throw Error(owned->code, context + ": " + std::string(message));
}

}  // namespace cadenza
