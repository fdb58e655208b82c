// The definition of the opaque cdz_status, shared by the embedding API and
// the host services handed to plugins.
#pragma once

#include <string>

#include "cadenza/status.h"

struct cdz_status {
    cdz_status_code code;
    std::string message;
};

namespace cadenza {

// Never throws: on allocation failure it returns a static out-of-memory status.
cdz_status* status_create(cdz_status_code code, const char* message) noexcept;
// Frees any status, including the static one.
void status_release(cdz_status* status) noexcept;
// Throws cadenza::Error carrying the status (which it frees) if it is not NULL.
void throw_if_error(cdz_status* status, const std::string& context);

// Runs `body`, turning any exception into a status. The one place where
// exceptions stop on their way to a C caller.
template <typename Body>
cdz_status* status_from_exceptions(Body&& body) noexcept;

}  // namespace cadenza

#include "status_object_inl.h"
