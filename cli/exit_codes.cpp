#include "exit_codes.h"

#include <iostream>

#include "error.h"

namespace cadenza::cli {

int report_exception(const std::exception& error) {
    std::cerr << "cadenza: error: " << error.what() << '\n';
    if (const auto* known = dynamic_cast<const Error*>(&error)) {
        const bool internal = known->code() == CDZ_STATUS_INTERNAL || known->code() == CDZ_STATUS_OUT_OF_MEMORY;
        return internal ? exit_internal_error : exit_user_error;
    }
    return exit_internal_error;
}

}  // namespace cadenza::cli
