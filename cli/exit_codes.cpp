#include "exit_codes.h"

#include <iostream>

#include "error.h"
#include "replacing_file.h"

namespace cadenza::cli {

bool is_internal_error(const std::exception& error) {
    if (dynamic_cast<const file_output::OutputFileError*>(&error)) return false;  // an output path the user gave
    const auto* known = dynamic_cast<const Error*>(&error);
    return !known || known->code() == CDZ_STATUS_INTERNAL || known->code() == CDZ_STATUS_OUT_OF_MEMORY;
}

int report_exception(const std::exception& error) {
    std::cerr << "cadenza: error: " << error.what() << '\n';
    return is_internal_error(error) ? exit_internal_error : exit_user_error;
}

}  // namespace cadenza::cli
