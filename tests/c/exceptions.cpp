/*
 * EXCEPTIONS_MODE=caller|other exceptions: a C++ exception thrown by an SPMD function (issue 28: it once
 * aborted every program with "Rust cannot catch foreign exceptions").
 *   caller: pid 0, whose process runs on the thread that called lpf_exec, throws
 *           std::runtime_error("thrown by pid 0"); the exception reaches main's
 *           catch around lpf_exec (the other processes' sync fails and they return).
 *           Prints "exceptions: caught: thrown by pid 0" and exits 0.
 *   other:  the last process (not pid 0; on a thread the section started, or a
 *           launched process serving pid 0) throws: no caller waits there, so the
 *           process ends through std::terminate with the C++ library's message
 *           ("terminate called after throwing an instance of 'std::runtime_error'"),
 *           as an exception leaving a thread's function does.
 * Runs on whatever engine the environment selects (LPF_MAX_PROCS on shm; lpfrun or
 * mpirun for the launched engines). The mode is in the environment, which every
 * process has (a launched process other than pid 0's never runs main).
 */
#include <lpf/core.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace {

bool other_mode()
{
    const char * mode = std::getenv("EXCEPTIONS_MODE");
    return mode != nullptr && std::strcmp(mode, "other") == 0;
}

void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    const lpf_pid_t thrower = other_mode() ? p - 1 : 0;
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        std::fprintf(stderr, "exceptions: pid %u: the first sync failed\n", s);
    if (s == thrower)
        throw std::runtime_error("thrown by pid " + std::to_string(s));
    // The others' next sync fails once the thrower has left.
    (void)lpf_sync(ctx, LPF_SYNC_DEFAULT);
}

} // namespace

int main()
{
    const char * mode = std::getenv("EXCEPTIONS_MODE");
    if (mode == nullptr || (std::strcmp(mode, "caller") != 0 && std::strcmp(mode, "other") != 0)) {
        std::fprintf(stderr, "usage: EXCEPTIONS_MODE=caller|other exceptions\n");
        return 2;
    }
    try {
        const lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, LPF_NO_ARGS);
        std::printf("exceptions: lpf_exec returned %d without an exception\n", rc);
    } catch (const std::runtime_error & e) {
        std::printf("exceptions: caught: %s\n", e.what());
        std::fflush(stdout);
        return other_mode() ? 1 : 0;
    }
    return 1;
}
