/*
 * ring: put-based and get-based rings over all processes of an lpf_exec
 * section (see ring_common.h).
 */
#include <lpf/core.h>

#include "ring_common.h"

int main(void)
{
    struct ring_out out;
    unsigned want = test_requested_procs();
    lpf_err_t rc;
    int bad = 0;

    rc = lpf_exec(LPF_ROOT, LPF_MAX_P, ring_spmd, ring_args(&out));
    EXPECT(&bad, 0, rc == LPF_SUCCESS, "lpf_exec returned %d", rc);
    bad += ring_verify_out(&out, 1);
    if (out.magic == RING_MAGIC) {
        EXPECT(&bad, 0, out.pid == 0, "output written by pid %u", out.pid);
        if (want != 0)
            EXPECT(&bad, 0, out.nprocs == want,
                   "LPF_MAX_PROCS=%u but the section had %u processes",
                   want, out.nprocs);
    }
    if (bad != 0) {
        fprintf(stderr, "ring: FAILED (%d problem(s))\n", bad);
        return 1;
    }
    printf("ring: ok (%u processes, %d rounds)\n", out.nprocs, out.rounds);
    return 0;
}
