// The exception the core throws inside itself: the plugin SDK's, so that the
// libraries the core shares with the plugins throw one type. It carries the
// status code that the C ABI boundary turns it into.
#pragma once

#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza {

using Error = sdk::Error;

}  // namespace cadenza
