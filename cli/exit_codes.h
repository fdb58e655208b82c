// The command line's exit codes: 0 ok, 1 user error, 2 internal error.
#pragma once

#include <exception>

namespace cadenza::cli {

enum ExitCode { exit_ok = 0, exit_user_error = 1, exit_internal_error = 2 };

// A bug rather than bad input: cadenza::Error with CDZ_STATUS_INTERNAL or
// CDZ_STATUS_OUT_OF_MEMORY, or any other exception.
bool is_internal_error(const std::exception& error);

// Prints the exception to standard error and says which exit code it means.
int report_exception(const std::exception& error);

}  // namespace cadenza::cli
