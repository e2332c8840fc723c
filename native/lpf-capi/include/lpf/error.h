/*
 * lpf/error.h -- extension (not part of the LPF specification): a readable
 * explanation of the last failure.
 */
#ifndef LPF_ERROR_H
#define LPF_ERROR_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * The message describing the most recent LPF call made by the calling thread
 * that did not return LPF_SUCCESS, or "" if there was none. Never NULL. The
 * string stays valid until this thread's next LPF call.
 */
const char * lpf_error_message(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_ERROR_H */
