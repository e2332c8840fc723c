// The calls of the program's SPMD functions (lpf_spmd_t), in C++ because a C++
// exception thrown by one must not unwind into Rust frames that cannot carry it (a
// foreign exception reaching catch_unwind or std::thread::scope aborts the process with
// "Rust cannot catch foreign exceptions"). See CSpmd::call in lib.rs.
//
// build.rs compiles this file and makes every symbol it references weak: a C program
// that links liblpf_core needs no C++ library (it throws nothing, so nothing here that
// needs one ever runs), and a C++ program's own C++ library provides them.
#include <lpf/core.h>

#include <exception>
#include <new>

// Runs the SPMD function of a process whose thread is the one that called lpf_exec,
// lpf_hook or lpf_rehook: an exception it throws is caught and kept (*kept, to be
// thrown again by lpf_keep_rethrow when that call returns to its caller); returns 1
// then, 0 when the function returned.
extern "C" int lpf_spmd_call_keeping(lpf_spmd_t spmd, lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args,
                                     void ** kept)
{
    try {
        spmd(ctx, s, p, args);
        return 0;
    } catch (...) {
        *kept = new (std::nothrow) std::exception_ptr(std::current_exception());
        return 1;
    }
}

// Runs the SPMD function of a process on any other thread (a process of the section
// started for it): no caller waits there, so an exception ends the process through
// std::terminate, with the C++ library's message, as an exception leaving a thread's
// function does.
extern "C" void lpf_spmd_call_or_terminate(lpf_spmd_t spmd, lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args) noexcept
{
    spmd(ctx, s, p, args);
}

// Throws the exception kept by lpf_spmd_call_keeping again (and frees its record).
extern "C" void lpf_keep_rethrow(void * kept)
{
    std::exception_ptr * record = static_cast<std::exception_ptr *>(kept);
    std::exception_ptr e = *record;
    delete record;
    std::rethrow_exception(e);
}

// Frees the record of a kept exception that will not be thrown again.
extern "C" void lpf_keep_forget(void * kept)
{
    delete static_cast<std::exception_ptr *>(kept);
}
