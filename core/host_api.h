// The table of host services handed to every plugin library.
#pragma once

#include "cadenza/plugin.h"

namespace cadenza {

// One table for the life of the process.
const cdz_host_api* host_api();

}  // namespace cadenza
