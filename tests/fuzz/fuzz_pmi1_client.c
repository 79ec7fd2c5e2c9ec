/* fuzz_pmi1_client.c - libFuzzer target: libpmi (the PMI-1 client API) against a
 * hostile PMI server.
 *
 * fuzz-sources: libpmi2/pmi1_api.c libpmi2/pcli.c common/pmap.c common/pmi_wire.c
 * fuzz-cflags: -Icommon -Ilibpmi2 -Iinclude
 * fuzz-options: -close_fd_mask=2
 *
 * Contract: like fuzz_pmi2_client.c (the input is all the server sends, then EOF), with
 * the session MPICH's PMI-1 client runs: PMI_Init (init, get_maxes), the kvs name, the
 * sizes, universe size and appnum, put / commit / barrier / get, the clique (which
 * fetches and parses PMI_process_mapping for PMI_SIZE=4 ranks), the iterator, name
 * publish / lookup / unpublish, PMI_Finalize.  Caller buffers are exact-size heap
 * blocks.  Nothing a server sends may crash, hang or overflow the task.
 * Seeds: corpus/pmi1_client/ (loom's server's replies to this session, Hydra-style
 * replies without rc, errors).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "pmi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    setenv("PMI_RANK", "1", 1);
    setenv("PMI_SIZE", "4", 1);
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    unsetenv("PMI_SPAWNED");
    unsetenv("PMI2_DEBUG");
    unsetenv("PMI_DEBUG");
    return 0;
}

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

    if (size > 200000)
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

    int spawned = -1;
    if (PMI_Init(&spawned) == PMI_SUCCESS) {
        char *kvs = xbuf(32), *val = xbuf(48), *key = xbuf(16), *port = xbuf(256); /* pmi.h: lookup writes at most 256 bytes */
        int *ranks = malloc(4 * sizeof(int));
        int n = -1, len = -1;

        PMI_KVS_Get_my_name(kvs, 32);
        PMI_KVS_Get_name_length_max(&len);
        PMI_KVS_Get_key_length_max(&len);
        PMI_KVS_Get_value_length_max(&len);
        PMI_Get_size(&n);
        PMI_Get_rank(&n);
        PMI_Get_universe_size(&n);
        PMI_Get_appnum(&n);
        PMI_KVS_Put(kvs[0] != 'X' ? kvs : "kvs_1", "key1", "value1");
        PMI_KVS_Commit("kvs_1");
        PMI_Barrier();
        PMI_KVS_Get("kvs_1", "key0", val, 48);
        n = -1;
        if (PMI_Get_clique_size(&n) == PMI_SUCCESS && (n < 1 || n > 4))
            __builtin_trap(); /* a clique is 1..PMI_SIZE ranks, whatever the map says */
        PMI_Get_clique_ranks(ranks, 4);
        PMI_KVS_Iter_first("kvs_1", key, 16, val, 48);
        PMI_KVS_Iter_next("kvs_1", key, 16, val, 48);
        PMI_Publish_name("svc", "port0");
        PMI_Lookup_name("svc", port);
        PMI_Unpublish_name("svc");
        PMI_Finalize();
        free(kvs);
        free(val);
        free(key);
        free(port);
        free(ranks);
    }
    PMI_BOOL init = PMI_FALSE;
    PMI_Initialized(&init);
    if (init == PMI_TRUE)
        __builtin_trap();
    close(sv[0]);
    return 0;
}
