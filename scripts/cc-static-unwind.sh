#!/usr/bin/env bash
# Linker driver for liblpf_jni.so (set as cargo's linker by the jar builds): the same
# `cc` call as usual, except that GCC's unwinder is linked in statically
# (libgcc_eh.a) instead of depending on libgcc_s.so.1, so that the library loaded into
# executor JVMs needs nothing beyond glibc. Panics are still caught (unwinding works
# inside the library); none crosses into the JVM.
args=()
for a in "$@"; do
    if [ "$a" = -lgcc_s ]; then
        args+=(-l:libgcc_eh.a)
    else
        args+=("$a")
    fi
done
exec "${LPF_JNI_CC:-cc}" "${args[@]}"
