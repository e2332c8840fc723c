/*
 * auto_init_off: a program started by lpfrun that defines LPF_MPI_AUTO_INITIALIZE
 * as 0 (lpf/mpi.h, #17 item 3): the runtime does not join the processes before
 * main, so every process runs main and makes its own init. Here each one meets the
 * others with lpf_mpi_initialize_over_tcp at lpfrun's rendezvous (LPF_TCP_MASTER,
 * LPF_TCP_PORT, LPF_PID, LPF_NPROCS: lpfrun's own job is never joined, so its port
 * is free for this one) and runs a ring of puts with lpf_hook. Each process prints
 *   "auto_init_off: main of process PID of N, hook ok"
 * on success; exits non-zero on any failure.
 */
#include <lpf/core.h>
#include <lpf/mpi.h>

#include <stdio.h>
#include <stdlib.h>

const int LPF_MPI_AUTO_INITIALIZE = 0;

static void ring(lpf_t ctx, lpf_pid_t pid, lpf_pid_t nprocs, lpf_args_t args)
{
    unsigned mine = pid, left = nprocs; /* nprocs: nothing arrived */
    lpf_memslot_t src, dst;
    if (args.output_size != sizeof left)
        return;
    if (lpf_resize_memory_register(ctx, 2) != LPF_SUCCESS || lpf_resize_message_queue(ctx, 2) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        return;
    if (lpf_register_local(ctx, &mine, sizeof mine, &src) != LPF_SUCCESS ||
        lpf_register_global(ctx, &left, sizeof left, &dst) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        return;
    if (lpf_put(ctx, src, 0, (pid + 1) % nprocs, dst, 0, sizeof mine, LPF_MSG_DEFAULT) != LPF_SUCCESS ||
        lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        return;
    *(unsigned *)args.output = left;
}

int main(void)
{
    const char *master = getenv("LPF_TCP_MASTER"), *port = getenv("LPF_TCP_PORT");
    const char *pid_text = getenv("LPF_PID"), *n_text = getenv("LPF_NPROCS");
    lpf_init_t init = LPF_INIT_NONE;
    lpf_args_t args = LPF_NO_ARGS;
    unsigned left = ~0u, pid, n;
    if (!master || !port || !pid_text || !n_text) {
        fprintf(stderr, "auto_init_off: start me with lpfrun (LPF_TCP_MASTER, LPF_TCP_PORT, LPF_PID, LPF_NPROCS)\n");
        return 1;
    }
    pid = (unsigned)atoi(pid_text);
    n = (unsigned)atoi(n_text);
    if (lpf_mpi_initialize_over_tcp(master, port, 30000, pid, n, &init) != LPF_SUCCESS) {
        fprintf(stderr, "auto_init_off: process %u: lpf_mpi_initialize_over_tcp failed\n", pid);
        return 1;
    }
    args.output = &left;
    args.output_size = sizeof left;
    if (lpf_hook(init, ring, args) != LPF_SUCCESS || left != (pid + n - 1) % n) {
        fprintf(stderr, "auto_init_off: process %u: lpf_hook failed or wrong left neighbour (%u)\n", pid, left);
        return 1;
    }
    if (lpf_mpi_finalize(init) != LPF_SUCCESS)
        return 1;
    printf("auto_init_off: main of process %u of %u, hook ok\n", pid, n);
    return 0;
}
