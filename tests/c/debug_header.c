/*
 * debug_header: built by tests/c/run.sh with the installed lpfcc selecting the debug
 * layer, once with -llpf_debug (as the reference's wrapper takes it) and once with
 * -I<prefix>/include/debug given by the caller (the caller's -I directories come
 * before lpfcc's own, as with the reference's wrapper). Either way <lpf/core.h> must
 * be the debug layer's header, which sends the calls to lpf_debug_* with the caller's
 * file and line (lpf_put becomes a macro); with LPF's own header first the build
 * fails on the #error below. The program then runs one exec with a put through the
 * debug layer and exits 0 when every call succeeded.
 */
#include <lpf/core.h>

#ifndef lpf_put
#error "<lpf/core.h> is not the debug layer's header: lpfcc put its own include path before the caller's"
#endif

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    int mine = (int)s, got = -1, bad = 0;
    lpf_memslot_t src = LPF_INVALID_MEMSLOT, dst = LPF_INVALID_MEMSLOT;
    bad |= lpf_resize_memory_register(ctx, 2) != LPF_SUCCESS;
    bad |= lpf_resize_message_queue(ctx, 2) != LPF_SUCCESS;
    bad |= lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_register_local(ctx, &mine, sizeof mine, &src) != LPF_SUCCESS;
    bad |= lpf_register_global(ctx, &got, sizeof got, &dst) != LPF_SUCCESS;
    bad |= lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_put(ctx, src, 0, (s + 1) % p, dst, 0, sizeof mine, LPF_MSG_DEFAULT) != LPF_SUCCESS;
    bad |= lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS;
    bad |= got != (int)((s + p - 1) % p);
    if (s == 0 && args.output_size == sizeof bad)
        *(int *)args.output = bad;
}

int main(void)
{
    int bad = 1;
    lpf_args_t args = { NULL, 0, &bad, sizeof bad, NULL, 0 };
    if (lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, args) != LPF_SUCCESS)
        return 1;
    return bad;
}
