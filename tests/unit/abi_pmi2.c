/* abi_pmi2.c - ABI probe for libpmi2, built twice by tests/unit/clients.mk.
 *
 * Built against our include/pmi2.h (abi_pmi2_ours) and against Slurm's
 * <slurm/pmi2.h> (abi_pmi2_slurmhdr, -DABI_SLURM_HEADER), both linked to OUR
 * libpmi2.  "layout" prints every constant, protocol string and struct
 * layout of the header it was built with: abi-libpmi2.sh diffs the two
 * outputs.  "run" exercises the API in singleton mode and prints which
 * shared object PMI2_Init came from, proving a program written for Slurm's
 * header runs on our library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#ifdef ABI_SLURM_HEADER
#include <slurm/pmi2.h>
#else
#include "pmi2.h"
#endif

#define I(x) printf("%s=%ld\n", #x, (long)(x))
#define S(x) printf("%s=%s\n", #x, x)
#define SZ(t) printf("sizeof(%s)=%zu\n", #t, sizeof(t))
#define OFF(t, m) printf("offsetof(%s,%s)=%zu\n", #t, #m, offsetof(t, m))

static void layout(void)
{
    I(PMI2_MAX_KEYLEN);
    I(PMI2_MAX_VALLEN);
    I(PMI2_MAX_ATTRVALUE);
    I(PMI2_ID_NULL);
    I(PMII_COMMANDLEN_SIZE);
    I(PMII_MAX_COMMAND_LEN);
    I(HAVE_PMIX_RING);
    I(PMI2_SUCCESS);
    I(PMI2_FAIL);
    I(PMI2_ERR_INIT);
    I(PMI2_ERR_NOMEM);
    I(PMI2_ERR_INVALID_ARG);
    I(PMI2_ERR_INVALID_KEY);
    I(PMI2_ERR_INVALID_KEY_LENGTH);
    I(PMI2_ERR_INVALID_VAL);
    I(PMI2_ERR_INVALID_VAL_LENGTH);
    I(PMI2_ERR_INVALID_LENGTH);
    I(PMI2_ERR_INVALID_NUM_ARGS);
    I(PMI2_ERR_INVALID_ARGS);
    I(PMI2_ERR_INVALID_NUM_PARSED);
    I(PMI2_ERR_INVALID_KEYVALP);
    I(PMI2_ERR_INVALID_SIZE);
    I(PMI2_ERR_OTHER);

    S(FULLINIT_CMD);
    S(FULLINITRESP_CMD);
    S(FINALIZE_CMD);
    S(FINALIZERESP_CMD);
    S(ABORT_CMD);
    S(JOBGETID_CMD);
    S(JOBGETIDRESP_CMD);
    S(JOBCONNECT_CMD);
    S(JOBCONNECTRESP_CMD);
    S(JOBDISCONNECT_CMD);
    S(JOBDISCONNECTRESP_CMD);
    S(KVSPUT_CMD);
    S(KVSPUTRESP_CMD);
    S(KVSFENCE_CMD);
    S(KVSFENCERESP_CMD);
    S(KVSGET_CMD);
    S(KVSGETRESP_CMD);
    S(GETNODEATTR_CMD);
    S(GETNODEATTRRESP_CMD);
    S(PUTNODEATTR_CMD);
    S(PUTNODEATTRRESP_CMD);
    S(GETJOBATTR_CMD);
    S(GETJOBATTRRESP_CMD);
    S(NAMEPUBLISH_CMD);
    S(NAMEPUBLISHRESP_CMD);
    S(NAMEUNPUBLISH_CMD);
    S(NAMEUNPUBLISHRESP_CMD);
    S(NAMELOOKUP_CMD);
    S(NAMELOOKUPRESP_CMD);
    S(RING_CMD);
    S(RINGRESP_CMD);
    S(PMIJOBID_KEY);
    S(PMIRANK_KEY);
    S(SRCID_KEY);
    S(THREADED_KEY);
    S(RC_KEY);
    S(ERRMSG_KEY);
    S(PMIVERSION_KEY);
    S(PMISUBVER_KEY);
    S(RANK_KEY);
    S(SIZE_KEY);
    S(APPNUM_KEY);
    S(SPAWNERJOBID_KEY);
    S(DEBUGGED_KEY);
    S(PMIVERBOSE_KEY);
    S(ISWORLD_KEY);
    S(MSG_KEY);
    S(JOBID_KEY);
    S(KVSCOPY_KEY);
    S(KEY_KEY);
    S(VALUE_KEY);
    S(FOUND_KEY);
    S(WAIT_KEY);
    S(NAME_KEY);
    S(PORT_KEY);
    S(THRID_KEY);
    S(INFOKEYCOUNT_KEY);
    S(INFOKEY_KEY);
    S(INFOVAL_KEY);
    S(RING_COUNT_KEY);
    S(RING_LEFT_KEY);
    S(RING_RIGHT_KEY);
    S(TRUE_VAL);
    S(FALSE_VAL);

    SZ(PMI2_Keyvalpair);
    OFF(PMI2_Keyvalpair, key);
    OFF(PMI2_Keyvalpair, value);
    OFF(PMI2_Keyvalpair, valueLen);
    OFF(PMI2_Keyvalpair, isCopy);
    SZ(PMI2_Command);
    OFF(PMI2_Command, nPairs);
    OFF(PMI2_Command, command);
    OFF(PMI2_Command, pairs);
    OFF(PMI2_Command, complete);
    SZ(PMI2_Connect_comm_t);
    OFF(PMI2_Connect_comm_t, read);
    OFF(PMI2_Connect_comm_t, write);
    OFF(PMI2_Connect_comm_t, ctx);
    OFF(PMI2_Connect_comm_t, isMaster);
    SZ(struct MPID_Info);
    OFF(struct MPID_Info, handle);
    OFF(struct MPID_Info, pobj_mutex);
    OFF(struct MPID_Info, ref_count);
    OFF(struct MPID_Info, next);
    OFF(struct MPID_Info, key);
    OFF(struct MPID_Info, value);
    SZ(PMI2U_Info);
}

static int run(void)
{
    int spawned, size, rank, appnum, len, found, rr, nr;
    char v[64], l[16], r[16];
    Dl_info di;

    if (dladdr((void *)PMI2_Init, &di) && di.dli_fname)
        printf("lib=%s\n", di.dli_fname);
    if (PMI2_Init(&spawned, &size, &rank, &appnum) != PMI2_SUCCESS || size != 1 ||
        rank != 0 || appnum != -1 || spawned != 0)
        return 1;
    if (PMI2_KVS_Put("k", "v") != PMI2_SUCCESS || PMI2_KVS_Fence() != PMI2_SUCCESS ||
        PMI2_KVS_Get(NULL, PMI2_ID_NULL, "k", v, sizeof(v), &len) != PMI2_SUCCESS ||
        strcmp(v, "v") != 0 || len != 1)
        return 2;
    if (PMI2_Info_GetJobAttr("universeSize", v, sizeof(v), &found) != PMI2_SUCCESS ||
        !found || strcmp(v, "1") != 0)
        return 3;
    if (PMIX_Ring("x", &rr, &nr, l, r, sizeof(l)) != PMI2_SUCCESS || rr != 0 || nr != 1 ||
        strcmp(l, "x") != 0 || strcmp(r, "x") != 0)
        return 4;
    if (PMI2_Finalize() != PMI2_SUCCESS || PMI2_Initialized())
        return 5;
    printf("run=ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "run") == 0)
        return run();
    layout();
    return 0;
}
