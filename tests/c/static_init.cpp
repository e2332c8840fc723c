/*
 * static_init: a launched C++ program whose SPMD function uses what the program's
 * static initialisation makes (global objects with constructors, std::cout) on
 * every process. Under lpfrun or mpirun the processes other than pid 0's serve pid
 * 0's lpf_exec: they must start only after that initialisation (issue 28: they once
 * served from the library's constructor, before it, and crashed in
 * std::ostream::sentry or saw unconstructed globals).
 * Each process of the section prints one line "static_init: pid S of P: globals
 * constructed"; a process that sees an unconstructed global exits with status 3.
 */
#include <lpf/core.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

namespace {

struct Registry {
    std::string name;
    int magic;
    Registry() : name("constructed"), magic(0x5eed) {}
};

Registry registry;
const std::string greeting = "a global string";

void spmd(lpf_t, lpf_pid_t s, lpf_pid_t p, lpf_args_t)
{
    const bool ok = registry.magic == 0x5eed && registry.name == "constructed" && greeting == "a global string";
    if (!ok) {
        std::fprintf(stderr, "static_init: pid %u: the program's globals are not constructed\n", s);
        std::exit(3);
    }
    std::cout << "static_init: pid " << s << " of " << p << ": globals constructed" << std::endl;
}

} // namespace

int main()
{
    const lpf_err_t rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, LPF_NO_ARGS);
    std::cout << "static_init: main after lpf_exec" << std::endl;
    return rc == LPF_SUCCESS ? 0 : 1;
}
