/* fuzz_pmi2_client.c - libFuzzer target: libpmi2 (the PMI-2 client API) against a
 * hostile PMI server.
 *
 * fuzz-sources: libpmi2/pmi2_api.c libpmi2/pcli.c common/pmap.c common/pmi_wire.c
 * fuzz-cflags: -Icommon -Ilibpmi2 -Iinclude
 * fuzz-options: -close_fd_mask=2
 *
 * Contract: the input is everything the server sends on the task's PMI fd.  It is
 * written into one end of a socketpair whose write side is then shut down (the client
 * reads the input, then EOF), the other end is handed to the library as PMI_FD, and a
 * fixed session runs: PMI2_Init, Job_GetId, Info_GetJobAttr (mapping), the int-array
 * getters, KVS_Put / Fence / Get, node attribute put and get, PMIX_Ring, name publish /
 * lookup / unpublish, Finalize.  Every call must return (success or an error code) and
 * write only inside the caller's buffers, which are exact-size heap blocks so ASan sees
 * one byte too many.  Nothing a server sends may crash, hang or overflow the task.
 * Seeds: corpus/pmi2_client/ (the replies loom's server sends for this session, and
 * variants: not found, truncation, rc != 0, split records).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>

#include "pmi2.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("PMI_RANK", "0", 1);
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    unsetenv("PMI_JOBID");
    unsetenv("PMI2_DEBUG");
    unsetenv("PMI_DEBUG");
    /* the library logs refusals to stderr: -close_fd_mask=2 (fuzz-options) keeps them
     * out of the fuzzer's output, which libFuzzer writes through its own copy */
    return 0;
}

/* exact-size heap buffers: one byte past the end is an ASan report */
static char *xbuf(size_t n)
{
    char *p = malloc(n);
    if (!p)
        abort();
    memset(p, 'X', n);
    return p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    int sv[2];
    char fdstr[16];

    if (size > 200000) /* one socket buffer: the input goes in before the session */
        return 0;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
        abort();
    int big = 1 << 20;
    setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &big, sizeof(big));
    setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(sv[0], data + off, size - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    shutdown(sv[0], SHUT_WR);
    snprintf(fdstr, sizeof(fdstr), "%d", sv[1]);
    setenv("PMI_FD", fdstr, 1);

    int spawned = -1, sz = -1, rank = -1, appnum = -1;
    if (PMI2_Init(&spawned, &sz, &rank, &appnum) == PMI2_SUCCESS) {
        if (sz <= 0 || rank < 0 || rank >= sz)
            __builtin_trap(); /* Init must never report an impossible rank/size */
        char *id = xbuf(16), *map = xbuf(64), *val = xbuf(32), *left = xbuf(8),
             *right = xbuf(8), *port = xbuf(24);
        int *arr = malloc(4 * sizeof(int));
        int found = 0, outlen = 0, vallen = 0, rr = 0, rs = 0;

        PMI2_Job_GetId(id, 16);
        PMI2_Info_GetJobAttr("PMI_process_mapping", map, 64, &found);
        PMI2_Info_GetJobAttrIntArray("universeSize", arr, 4, &outlen, &found);
        if (outlen < 0 || outlen > 4)
            __builtin_trap();
        PMI2_KVS_Put("key0", "value0");
        PMI2_KVS_Fence();
        PMI2_KVS_Get(NULL, PMI2_ID_NULL, "key1", val, 32, &vallen);
        PMI2_Info_PutNodeAttr("na", "1");
        PMI2_Info_GetNodeAttr("na", val, 32, &found, 1);
        outlen = 0;
        PMI2_Info_GetNodeAttrIntArray("localRanks", arr, 4, &outlen, &found);
        if (outlen < 0 || outlen > 4)
            __builtin_trap();
        PMIX_Ring("r", &rr, &rs, left, right, 8);
        PMI2_Nameserv_publish("svc", NULL, "port0");
        PMI2_Nameserv_lookup("svc", NULL, port, 24);
        PMI2_Nameserv_unpublish("svc", NULL);
        PMI2_Finalize();
        free(id);
        free(map);
        free(val);
        free(left);
        free(right);
        free(port);
        free(arr);
    } else {
        /* a failed Init closed the fd; nothing else to do */
    }
    if (PMI2_Initialized())
        __builtin_trap(); /* Finalize (or a failed Init) must leave no session */
    close(sv[0]);
    /* the library closed sv[1] (PMI_FD) in Finalize or on a failed Init */
    return 0;
}
