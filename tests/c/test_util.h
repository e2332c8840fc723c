/*
 * Small helpers shared by the C test programs. Uses only the public LPF
 * headers and the C standard library, so the programs build against any
 * conforming lpf/core.h.
 */
#ifndef LPF_TEST_UTIL_H
#define LPF_TEST_UTIL_H

#include <lpf/core.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* lpf/error.h is an extension of this implementation; use it when present. */
#if defined(__has_include)
#  if __has_include(<lpf/error.h>)
#    include <lpf/error.h>
#    define TEST_HAVE_ERROR_MESSAGE 1
#  endif
#endif
#ifndef TEST_HAVE_ERROR_MESSAGE
#  define TEST_HAVE_ERROR_MESSAGE 0
#endif

/* Report a failed expectation of process `pid` and bump the counter `*bad`. */
#define EXPECT(bad, pid, cond, ...)                                          \
    do {                                                                     \
        if (!(cond)) {                                                       \
            fprintf(stderr, "%s:%d: pid %u: check failed: %s: ",            \
                    __FILE__, __LINE__, (unsigned)(pid), #cond);             \
            fprintf(stderr, __VA_ARGS__);                                    \
            fputc('\n', stderr);                                             \
            ++*(bad);                                                        \
        }                                                                    \
    } while (0)

/* The process count the harness asked for, or 0 when LPF_MAX_PROCS is not
 * set (or not a positive number). */
static inline unsigned test_requested_procs(void)
{
    const char *s = getenv("LPF_MAX_PROCS");
    char *end = NULL;
    unsigned long v;
    if (s == NULL || *s == '\0')
        return 0;
    v = strtoul(s, &end, 10);
    if (end == s || *end != '\0' || v == 0 || v > 1000000UL)
        return 0;
    return (unsigned)v;
}

/* The text of lpf_error_message(), or a placeholder when the extension is
 * not available. */
static inline const char *test_error_text(void)
{
#if TEST_HAVE_ERROR_MESSAGE
    const char *m = lpf_error_message();
    return m == NULL ? "(NULL)" : m;
#else
    return "(lpf_error_message not available)";
#endif
}

/* Whether the last failed call left a non-empty message (always true when
 * the extension is not available). */
static inline int test_error_message_ok(void)
{
#if TEST_HAVE_ERROR_MESSAGE
    const char *m = lpf_error_message();
    return m != NULL && m[0] != '\0';
#else
    return 1;
#endif
}

/*
 * Error broadcast by write conflict: every process whose `my_status` is
 * non-zero puts it into the error word of pid 0; pid 0 then holds some
 * non-zero value if and only if at least one process failed. `status_slot`
 * must be a registered (local or global) slot over `*my_status`, `err_slot` a
 * global slot over the error word, which pid 0 must have cleared beforehand
 * (in an earlier superstep). Costs one superstep. Returns the lpf_sync result
 * (or the failed lpf_put result).
 */
static inline lpf_err_t test_gather_status(lpf_t ctx, const int *my_status,
                                    lpf_memslot_t status_slot,
                                    lpf_memslot_t err_slot)
{
    lpf_err_t rc;
    if (*my_status != 0) {
        rc = lpf_put(ctx, status_slot, 0, 0, err_slot, 0, sizeof(int),
                     LPF_MSG_DEFAULT);
        if (rc != LPF_SUCCESS)
            return rc;
    }
    return lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

#endif /* LPF_TEST_UTIL_H */
