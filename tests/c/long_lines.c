/*
 * long_lines: every process prints LINES lines of WIDTH characters, each line in
 * pieces of PIECE bytes with separate write(2) calls (so no line is one atomic
 * write), between syncs so that the processes write at the same time.
 *
 * A line is "pid <s>: " followed by WIDTH copies of the letter 'a' + s; before them,
 * pid 0 prints "nprocs <p>" in one write, in a superstep of its own. The test harness
 * checks that every line of the job's output is one whole such line (#17 item 9:
 * lpfrun passes each process's output on line by line) and that the job has the P
 * processes it asked for.
 */
#include <lpf/core.h>

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LINES 200
#define WIDTH 300
#define PIECE 7

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(1, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

static void spmd(lpf_t ctx, lpf_pid_t s, lpf_pid_t p, lpf_args_t args)
{
    char line[WIDTH + 32];
    int head = snprintf(line, sizeof line, "pid %u: ", (unsigned)s);
    (void)args;
    if (s == 0) {
        char first[32];
        int n = snprintf(first, sizeof first, "nprocs %u\n", (unsigned)p);
        write_all(first, (size_t)n);
    }
    /* Nobody writes a long line before that one is out (threads of one process, on
     * pthread/shm, share the output and could cut it). */
    if (lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
        return;
    memset(line + head, 'a' + (int)(s % 26), WIDTH);
    line[head + WIDTH] = '\n';
    for (int i = 0; i < LINES; i++) {
        for (int at = 0; at < head + WIDTH + 1; at += PIECE) {
            int n = head + WIDTH + 1 - at;
            write_all(line + at, (size_t)(n < PIECE ? n : PIECE));
        }
        if (i % 50 == 0 && lpf_sync(ctx, LPF_SYNC_DEFAULT) != LPF_SUCCESS)
            return;
    }
}

int main(void)
{
    return lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, LPF_NO_ARGS) == LPF_SUCCESS ? 0 : 1;
}
