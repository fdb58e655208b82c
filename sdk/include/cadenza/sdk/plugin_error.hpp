// cadenza plugin SDK, C++17, header-only: the one exception of a plugin and
// of the libraries it links, and the guard that turns any exception into a
// cdz_status at the C ABI, as ONNX Runtime's API_IMPL_BEGIN / API_IMPL_END do.
//
// A plugin library keeps what cdz_plugin_entry gave it in library(): one per
// shared library, since plugins are built with hidden visibility.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>

#include "cadenza/plugin.h"

namespace cadenza::sdk {

// Thrown inside a plugin; carries the status code the host will see.
class Error : public std::runtime_error {
public:
    Error(cdz_status_code code, const std::string& message) : std::runtime_error(message), code_(code) {}
    cdz_status_code code() const noexcept { return code_; }

private:
    cdz_status_code code_;
};

// The message of an exception that is not an Error (LibTorch's c10::Error
// says more than its what() should show); NULL: what().
using ExceptionDescriber = std::string (*)(const std::exception& error);

struct LibraryContext {
    const cdz_host_api* host = nullptr;
    // Starts every message ("acceptor.pcg: ..."); NULL: messages as thrown.
    const char* plugin_name = nullptr;
    ExceptionDescriber describe = nullptr;
};

inline LibraryContext& library() noexcept {
    static LibraryContext context;
    return context;
}

inline const cdz_host_api& host() noexcept { return *library().host; }

// A status the host returned becomes an Error with its code and message.
inline void throw_if_error(const cdz_host_api& host, cdz_status* status) {
    if (!status) return;
    const cdz_status_code code = host.status_code(status);
    std::string message = host.status_message(status);
    host.status_release(status);
    throw Error(code, message);
}

inline void throw_if_error(cdz_status* status) { throw_if_error(host(), status); }

// The exception being handled as a status. Call only from a catch block.
inline cdz_status* status_of_current_exception(const LibraryContext& context) noexcept {
    const cdz_host_api* host = context.host;
    if (!host || !host->status_create) return nullptr;  // cannot happen once the entry point accepted the host
    const char* name = context.plugin_name;
    auto make = [&](cdz_status_code code, const std::string& message) noexcept {
        try {
            // A message that already names the plugin (passed on from another call) keeps its start.
            const std::string prefix = name ? std::string(name) + ": " : std::string();
            const bool named = message.compare(0, prefix.size(), prefix) == 0;
            return host->status_create(code, (named ? message : prefix + message).c_str());
        } catch (...) {
            return host->status_create(code, name ? name : message.c_str());
        }
    };
    try {
        throw;
    } catch (const Error& error) {
        return make(error.code(), error.what());
    } catch (const std::bad_alloc&) {
        return make(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception& error) {
        try {
            return make(CDZ_STATUS_INTERNAL, context.describe ? context.describe(error) : error.what());
        } catch (...) {
            return make(CDZ_STATUS_INTERNAL, error.what());
        }
    } catch (...) {
        return make(CDZ_STATUS_INTERNAL, "unknown exception");
    }
}

// Runs `body`; NULL when it returns, a status when it throws. Nothing escapes.
template <typename Body>
cdz_status* guarded(const LibraryContext& context, Body&& body) noexcept {
    try {
        body();
        return nullptr;
    } catch (...) {
        return status_of_current_exception(context);
    }
}

template <typename Body>
cdz_status* guarded(Body&& body) noexcept {
    return guarded(library(), std::forward<Body>(body));
}

// The body of cdz_plugin_entry: refuses a host of another major ABI or an
// older service table than this plugin's header, keeps the host in
// library() and lists the descriptors.
inline cdz_status* enter_plugin(const cdz_host_api* host, cdz_plugin_list* out,
                                const cdz_plugin_descriptor* const* descriptors, uint32_t count,
                                const char* plugin_name, ExceptionDescriber describe = nullptr) noexcept {
    if (out) out->count = 0;
    // status_create sits at the same place in every version of the table.
    if (!host || host->struct_size < CDZ_SIZE_THROUGH(cdz_host_api, status_create) || !host->status_create)
        return nullptr;  // nothing to report with
    const LibraryContext context{host, plugin_name, describe};
    if (host->abi_major != CDZ_PLUGIN_ABI_MAJOR)
        return guarded(context, [] { throw Error(CDZ_STATUS_ABI_MISMATCH, "the host speaks another major plugin ABI"); });
    if (host->struct_size < sizeof(cdz_host_api))
        return guarded(context, [] {
            throw Error(CDZ_STATUS_ABI_MISMATCH, "the host's service table is older than this plugin's");
        });
    if (!out) return guarded(context, [] { throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the plugin list is NULL"); });
    library() = context;
    out->struct_size = sizeof(cdz_plugin_list);
    out->descriptors = descriptors;
    out->count = count;
    return nullptr;
}

}  // namespace cadenza::sdk
