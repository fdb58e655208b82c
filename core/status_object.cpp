#include "status_object.h"

#include <memory>

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
    std::string message = context.empty() ? owned->message : context + ": " + owned->message;
    throw Error(owned->code, message);
}

}  // namespace cadenza
