/*
 * lpf/abort.h -- optional immediate termination of all processes of a
 * section.
 */
#ifndef LPF_ABORT_H
#define LPF_ABORT_H

#include <lpf/core.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Non-zero when lpf_abort really terminates the processes; zero when it is
 *  a no-op that returns LPF_SUCCESS. */
extern const int LPF_HAS_ABORT;

/**
 * Terminates every process associated with ctx, without any collective step:
 * one caller suffices. When LPF_HAS_ABORT is non-zero this does not return;
 * otherwise it returns LPF_SUCCESS and has no effect.
 */
lpf_err_t lpf_abort(lpf_t ctx);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LPF_ABORT_H */
