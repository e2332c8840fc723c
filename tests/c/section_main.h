/*
 * The main of a test program whose SPMD function writes its failure count (an int) to
 * args.output on pid 0. Without arguments: one section from
 * lpf_exec(LPF_ROOT, LPF_MAX_P). With `SERVER PORT PID NPROCS [TIMEOUT_MS]`: NPROCS
 * separate processes meet over TCP (lpf_mpi_initialize_over_tcp, lpf/mpi.h) and run
 * it with lpf_hook; only pid 0 receives the total, the others report their own
 * failures on stderr and exit 0 (their failures are in pid 0's total).
 */
#ifndef LPF_TEST_SECTION_MAIN_H
#define LPF_TEST_SECTION_MAIN_H

#include <lpf/core.h>
#include <lpf/mpi.h>

#include <stdio.h>
#include <stdlib.h>

static int test_section_main(const char *name, lpf_spmd_t spmd, int argc, char **argv)
{
    int failures = -1;
    lpf_args_t args = LPF_NO_ARGS;
    lpf_err_t rc;
    args.output = &failures;
    args.output_size = sizeof failures;
    if (argc >= 5) {
        lpf_init_t init = LPF_INIT_NONE;
        rc = lpf_mpi_initialize_over_tcp(argv[1], argv[2],
                                         argc > 5 ? atoi(argv[5]) : 30000,
                                         (lpf_pid_t)atoi(argv[3]),
                                         (lpf_pid_t)atoi(argv[4]), &init);
        if (rc != LPF_SUCCESS) {
            fprintf(stderr, "%s: lpf_mpi_initialize_over_tcp returned %d\n", name, rc);
            return 1;
        }
        rc = lpf_hook(init, spmd, args);
        if (rc != LPF_SUCCESS)
            fprintf(stderr, "%s: lpf_hook returned %d\n", name, rc);
        if (lpf_mpi_finalize(init) != LPF_SUCCESS) {
            fprintf(stderr, "%s: lpf_mpi_finalize failed\n", name);
            rc = LPF_ERR_FATAL;
        }
    } else {
        rc = lpf_exec(LPF_ROOT, LPF_MAX_P, spmd, args);
        if (rc != LPF_SUCCESS)
            fprintf(stderr, "%s: lpf_exec returned %d\n", name, rc);
    }
    if (rc != LPF_SUCCESS)
        return 1;
    if (failures == -1)
        return 0; /* not pid 0 of a launched job */
    if (failures != 0) {
        fprintf(stderr, "%s: %d check(s) failed\n", name, failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
