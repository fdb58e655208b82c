// cadenza plugin SDK: a C++ class as the functions of a kind's table. The
// templates generate the C functions; each call is guarded, so that a member
// function reports a failure by throwing.
//
//   class Acceptor {
//   public:
//       explicit Acceptor(const cdz_instance_args& args);
//       void get_info(cdz_acceptor_info* out);
//       void accept(const cdz_accept_input* in, cdz_accept_output* out);
//   };
//   const cdz_acceptor_vtable vtable = {sizeof(cdz_acceptor_vtable), sdk::create<Acceptor>,
//       sdk::destroy<Acceptor>, sdk::method<&Acceptor::get_info>, sdk::method<&Acceptor::accept>};
//
// A member function that returns a value gets a trailing out-pointer in C:
// `int64_t length()` becomes cdz_status* (void* self, int64_t* out), and
// `std::unique_ptr<Session> open(int64_t capacity)` becomes cdz_status*
// (void* self, int64_t capacity, void** out): a session for the host to
// release with sdk::destroy<Session>.
#pragma once

#include <memory>
#include <utility>

#include "cadenza/plugin.h"
#include "cadenza/sdk/plugin_error.hpp"

namespace cadenza::sdk {

template <typename T>
cdz_status* create(const cdz_instance_args* args, void** out_ctx) noexcept {
    return guarded([&] {
        if (!args || !out_ctx) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "create: args or out_ctx is NULL");
        *out_ctx = nullptr;
        *out_ctx = new T(*args);
    });
}

template <typename T>
void destroy(void* object) noexcept {
    delete static_cast<T*>(object);
}

namespace detail {

template <typename T>
T& self_of(void* self) {
    if (!self) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the instance is NULL");
    return *static_cast<T*>(self);
}

template <typename Result>
struct OutPointer {
    using type = Result*;
    static void store(Result&& result, Result* out) { *out = std::move(result); }
};

template <typename Object>
struct OutPointer<std::unique_ptr<Object>> {
    using type = void**;
    static void store(std::unique_ptr<Object>&& result, void** out) { *out = result.release(); }
};

template <auto Method, typename Signature>
struct Trampoline;

template <auto Method, typename T, typename Result, typename... Args>
struct Trampoline<Method, Result (T::*)(Args...)> {
    static cdz_status* call(void* self, Args... args, typename OutPointer<Result>::type out) noexcept {
        return guarded([&] {
            if (!out) throw Error(CDZ_STATUS_INVALID_ARGUMENT, "the output pointer is NULL");
            OutPointer<Result>::store((self_of<T>(self).*Method)(args...), out);
        });
    }
};

template <auto Method, typename T, typename... Args>
struct Trampoline<Method, void (T::*)(Args...)> {
    static cdz_status* call(void* self, Args... args) noexcept {
        return guarded([&] { (self_of<T>(self).*Method)(args...); });
    }
};

// A const member function calls like its non-const form.
template <auto Method, typename T, typename Result, typename... Args>
struct Trampoline<Method, Result (T::*)(Args...) const> : Trampoline<Method, Result (T::*)(Args...)> {};

}  // namespace detail

// The C function of a member function: cdz_status* (void* self, args...[, out]).
template <auto Method>
constexpr auto method = &detail::Trampoline<Method, decltype(Method)>::call;

}  // namespace cadenza::sdk
