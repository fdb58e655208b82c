// The exception the core throws inside itself. It carries the status code
// that the C ABI boundary turns it into; nothing of it crosses that boundary.
#pragma once

#include <stdexcept>
#include <string>

#include "cadenza/status.h"

namespace cadenza {

class Error : public std::runtime_error {
public:
    Error(cdz_status_code code, const std::string& message)
        : std::runtime_error(message), code_(code) {}
    cdz_status_code code() const { return code_; }

private:
    cdz_status_code code_;
};

}  // namespace cadenza
