/* Plugin libraries that are wrong on purpose, one per compile definition,
 * for the loader's error tests:
 *   BROKEN_NO_ENTRY        exports no cdz_plugin_entry
 *   BROKEN_FUTURE_MAJOR    built for the next major of the plugin ABI
 *   BROKEN_PAST_MAJOR      built for the major before (0.x, before the 1.0 contract)
 *   BROKEN_NEWER_MINOR     built for a newer minor than the host's
 *   BROKEN_DUPLICATE_NAME  two descriptors with one name
 *   BROKEN_ENTRY_FAILS     the entry point returns an error status
 *   BROKEN_BAD_DEFAULT     a parameter default that does not fit its type
 *   BROKEN_SHORT_TABLE     a function table shorter than ABI 1.0's (0.3's: no sessions)
 *   DUPLICATE_OF_ARGMAX    a second library providing example.argmax_acceptor */
#include <stddef.h>

#include "cadenza/plugin.h"

static cdz_status* create(const cdz_instance_args* args, void** out_ctx) {
    (void)args;
    *out_ctx = (void*)1;
    return NULL;
}
static void destroy(void* ctx) { (void)ctx; }
static cdz_status* get_info(void* ctx, cdz_acceptor_info* out) {
    (void)ctx;
    out->verifies = 1;
    return NULL;
}
static cdz_status* accept(void* ctx, const cdz_accept_input* in, cdz_accept_output* out) {
    (void)ctx;
    (void)in;
    (void)out;
    return NULL;
}
#ifdef BROKEN_SHORT_TABLE
#define VTABLE_SIZE offsetof(cdz_acceptor_vtable, session_create)
#else
#define VTABLE_SIZE sizeof(cdz_acceptor_vtable)
#endif
static const cdz_acceptor_vtable vtable = {VTABLE_SIZE, create, destroy, get_info, accept,
                                           NULL, NULL, NULL, NULL, NULL};

#ifdef BROKEN_BAD_DEFAULT
static const cdz_param_spec params[] = {
    {"beta", CDZ_PARAM_FLOAT, "\"not a number\"", 0, 0, 0, NULL, "a default of the wrong type"},
};
#define PARAMS params
#define PARAM_COUNT 1
#else
#define PARAMS NULL
#define PARAM_COUNT 0
#endif

#if defined(BROKEN_FUTURE_MAJOR)
#define ABI_MAJOR (CDZ_PLUGIN_ABI_MAJOR + 1)
#elif defined(BROKEN_PAST_MAJOR)
#define ABI_MAJOR (CDZ_PLUGIN_ABI_MAJOR - 1)
#else
#define ABI_MAJOR CDZ_PLUGIN_ABI_MAJOR
#endif
#if defined(BROKEN_NEWER_MINOR)
#define ABI_MINOR (CDZ_PLUGIN_ABI_MINOR + 1)
#else
#define ABI_MINOR CDZ_PLUGIN_ABI_MINOR
#endif
#if defined(DUPLICATE_OF_ARGMAX)
#define NAME "example.argmax_acceptor"
#else
#define NAME "test.broken"
#endif

static const cdz_plugin_descriptor descriptor = {
    sizeof(cdz_plugin_descriptor), ABI_MAJOR, ABI_MINOR, NAME, CDZ_PLUGIN_KIND_ACCEPTOR, "0.0.1",
    "a plugin that is wrong on purpose", PARAMS, PARAM_COUNT, sizeof(cdz_param_spec), &vtable,
};

#if defined(BROKEN_DUPLICATE_NAME)
static const cdz_plugin_descriptor* const descriptors[] = {&descriptor, &descriptor};
#else
static const cdz_plugin_descriptor* const descriptors[] = {&descriptor};
#endif

#ifdef BROKEN_NO_ENTRY
CDZ_PLUGIN_EXPORT int not_the_entry_point(void) { return 0; }
#else
CDZ_PLUGIN_EXPORT cdz_status* cdz_plugin_entry(const cdz_host_api* host, cdz_plugin_list* out) {
#ifdef BROKEN_ENTRY_FAILS
    (void)out;
    return host->status_create(CDZ_STATUS_UNSUPPORTED, "this library refuses to load");
#else
    (void)host;
    out->descriptors = descriptors;
    out->count = sizeof(descriptors) / sizeof(descriptors[0]);
    return NULL;
#endif
}
#endif
