/* cadenza: status codes and status objects shared by the embedding API
 * (cadenza.h) and the plugin ABI (plugin.h). C99, no C++ or LibTorch types. */
#ifndef CADENZA_STATUS_H
#define CADENZA_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

/* Every fallible call returns a cdz_status*. NULL means success; anything else
 * carries a code and a message and is released with cdz_status_free (embedding
 * API) or by the host (statuses a plugin returns). */
typedef enum cdz_status_code {
    CDZ_STATUS_OK = 0,
    CDZ_STATUS_INVALID_ARGUMENT = 1, /* bad input from the caller */
    CDZ_STATUS_INVALID_CONFIG = 2,   /* a pipeline or parameter is wrong */
    CDZ_STATUS_NOT_FOUND = 3,        /* a file, plugin or symbol is missing */
    CDZ_STATUS_IO_ERROR = 4,
    CDZ_STATUS_ABI_MISMATCH = 5,     /* a plugin built for another ABI */
    CDZ_STATUS_UNSUPPORTED = 6,      /* valid request this component cannot do */
    CDZ_STATUS_CANCELLED = 7,        /* a callback asked to stop */
    CDZ_STATUS_OUT_OF_MEMORY = 8,
    CDZ_STATUS_INTERNAL = 9,         /* a bug: please report it */
    CDZ_STATUS_BUSY = 10             /* since embedding ABI 0.5: the handle is in use
                                        by this thread (a call from inside its own
                                        callback) */
} cdz_status_code;

typedef struct cdz_status cdz_status;

#ifdef __cplusplus
}
#endif

#endif /* CADENZA_STATUS_H */
