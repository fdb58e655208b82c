#pragma once

#include <exception>
#include <new>

#include "error.h"

namespace cadenza {

template <typename Body>
cdz_status* status_from_exceptions(Body&& body) noexcept {
    try {
        body();
        return nullptr;
    } catch (const Error& e) {
        return status_create(e.code(), e.what());
    } catch (const std::bad_alloc&) {
        return status_create(CDZ_STATUS_OUT_OF_MEMORY, "out of memory");
    } catch (const std::exception& e) {
        return status_create(CDZ_STATUS_INTERNAL, e.what());
    } catch (...) {
        return status_create(CDZ_STATUS_INTERNAL, "unknown exception");
    }
}

}  // namespace cadenza
