// The one exception type of the frontend plugins. It carries the status code
// the host will see; host_bridge turns it into a cdz_status at the C ABI.
#pragma once

#include <stdexcept>
#include <string>

#include "cadenza/status.h"

namespace cadenza::frontend {

class FrontendError : public std::runtime_error {
public:
    FrontendError(cdz_status_code code, const std::string& message)
        : std::runtime_error(message), code_(code) {}

    cdz_status_code code() const noexcept { return code_; }

private:
    cdz_status_code code_;
};

}  // namespace cadenza::frontend
