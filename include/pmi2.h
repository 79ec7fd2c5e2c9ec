/* pmi2.h - the PMI-2 client API of Loom's libpmi2.so.0.
 *
 * Contract:
 *   Source and binary compatible with Slurm's <slurm/pmi2.h> (contribs/pmi2,
 *   the header installed by Debian's libpmi2-0-dev): the same 22 functions
 *   with the same prototypes, the same constants and the same type layouts,
 *   so a program built against Slurm's header runs with our library and a
 *   program written for Slurm's header compiles unchanged with this one.
 *   Every function returns PMI2_SUCCESS (0) or a PMI2_ERR_* / PMI2_FAIL code
 *   unless noted.
 *
 * Notes:
 *   - The library finds its server through PMI_FD (an inherited connected
 *     socket), else PMI_PORT ("host:port", TCP); with neither it runs as a
 *     singleton: rank 0 of 1, appnum -1.
 *   - Thread safety: every call that talks to the server holds one
 *     process-wide mutex for its whole request/response exchange, so calls
 *     from several threads are serialised (a fence blocks the others).
 *     PMI2_Abort only takes a short write lock, so it works while another
 *     thread waits in a fence.
 *   - PMI2_KVS_Get reports truncation with a negative *vallen (the full
 *     length, negated), like Slurm's library.
 *   - PMI2_Info_GetSize returns the job size, like Slurm's library.
 *   - The command and key name strings below are protocol names; like the
 *     Slurm header they are per-translation-unit static arrays, not ABI.
 *   - No PMI_keyval_t here: Slurm's installed header has it commented out,
 *     so programs written for it may define their own; it lives in <pmi.h>.
 *
 * See also: include/pmi.h, libpmi2/pmi2_api.c, doc/wire.md, doc/clients.md
 */
#ifndef PMI2_H_INCLUDED
#define PMI2_H_INCLUDED

#if defined(__cplusplus)
extern "C" {
#endif

/* Limits (bytes, not counting the terminating NUL). */
#define PMI2_MAX_KEYLEN 64
#define PMI2_MAX_VALLEN 1024
#define PMI2_MAX_ATTRVALUE 1024
#define PMI2_ID_NULL -1

/* Wire framing: a 6-character decimal length, then at most 64 KiB. */
#define PMII_COMMANDLEN_SIZE 6
#define PMII_MAX_COMMAND_LEN (64 * 1024)

/* Return codes. */
#define PMI2_SUCCESS 0
#define PMI2_FAIL -1
#define PMI2_ERR_INIT 1
#define PMI2_ERR_NOMEM 2
#define PMI2_ERR_INVALID_ARG 3
#define PMI2_ERR_INVALID_KEY 4
#define PMI2_ERR_INVALID_KEY_LENGTH 5
#define PMI2_ERR_INVALID_VAL 6
#define PMI2_ERR_INVALID_VAL_LENGTH 7
#define PMI2_ERR_INVALID_LENGTH 8
#define PMI2_ERR_INVALID_NUM_ARGS 9
#define PMI2_ERR_INVALID_ARGS 10
#define PMI2_ERR_INVALID_NUM_PARSED 11
#define PMI2_ERR_INVALID_KEYVALP 12
#define PMI2_ERR_INVALID_SIZE 13
#define PMI2_ERR_OTHER 14

/* PMI-2 command names. */
static const char FULLINIT_CMD[] = "fullinit";
static const char FULLINITRESP_CMD[] = "fullinit-response";
static const char FINALIZE_CMD[] = "finalize";
static const char FINALIZERESP_CMD[] = "finalize-response";
static const char ABORT_CMD[] = "abort";
static const char JOBGETID_CMD[] = "job-getid";
static const char JOBGETIDRESP_CMD[] = "job-getid-response";
static const char JOBCONNECT_CMD[] = "job-connect";
static const char JOBCONNECTRESP_CMD[] = "job-connect-response";
static const char JOBDISCONNECT_CMD[] = "job-disconnect";
static const char JOBDISCONNECTRESP_CMD[] = "job-disconnect-response";
static const char KVSPUT_CMD[] = "kvs-put";
static const char KVSPUTRESP_CMD[] = "kvs-put-response";
static const char KVSFENCE_CMD[] = "kvs-fence";
static const char KVSFENCERESP_CMD[] = "kvs-fence-response";
static const char KVSGET_CMD[] = "kvs-get";
static const char KVSGETRESP_CMD[] = "kvs-get-response";
static const char GETNODEATTR_CMD[] = "info-getnodeattr";
static const char GETNODEATTRRESP_CMD[] = "info-getnodeattr-response";
static const char PUTNODEATTR_CMD[] = "info-putnodeattr";
static const char PUTNODEATTRRESP_CMD[] = "info-putnodeattr-response";
static const char GETJOBATTR_CMD[] = "info-getjobattr";
static const char GETJOBATTRRESP_CMD[] = "info-getjobattr-response";
static const char NAMEPUBLISH_CMD[] = "name-publish";
static const char NAMEPUBLISHRESP_CMD[] = "name-publish-response";
static const char NAMEUNPUBLISH_CMD[] = "name-unpublish";
static const char NAMEUNPUBLISHRESP_CMD[] = "name-unpublish-response";
static const char NAMELOOKUP_CMD[] = "name-lookup";
static const char NAMELOOKUPRESP_CMD[] = "name-lookup-response";
static const char RING_CMD[] = "ring";
static const char RINGRESP_CMD[] = "ring-response";

/* PMI-2 key names and boolean values. */
static const char PMIJOBID_KEY[] = "pmijobid";
static const char PMIRANK_KEY[] = "pmirank";
static const char SRCID_KEY[] = "srcid";
static const char THREADED_KEY[] = "threaded";
static const char RC_KEY[] = "rc";
static const char ERRMSG_KEY[] = "errmsg";
static const char PMIVERSION_KEY[] = "pmi-version";
static const char PMISUBVER_KEY[] = "pmi-subversion";
static const char RANK_KEY[] = "rank";
static const char SIZE_KEY[] = "size";
static const char APPNUM_KEY[] = "appnum";
static const char SPAWNERJOBID_KEY[] = "spawner-jobid";
static const char DEBUGGED_KEY[] = "debugged";
static const char PMIVERBOSE_KEY[] = "pmiverbose";
static const char ISWORLD_KEY[] = "isworld";
static const char MSG_KEY[] = "msg";
static const char JOBID_KEY[] = "jobid";
static const char KVSCOPY_KEY[] = "kvscopy";
static const char KEY_KEY[] = "key";
static const char VALUE_KEY[] = "value";
static const char FOUND_KEY[] = "found";
static const char WAIT_KEY[] = "wait";
static const char NAME_KEY[] = "name";
static const char PORT_KEY[] = "port";
static const char THRID_KEY[] = "thrid";
static const char INFOKEYCOUNT_KEY[] = "infokeycount";
static const char INFOKEY_KEY[] = "infokey%d";
static const char INFOVAL_KEY[] = "infoval%d";
static const char RING_COUNT_KEY[] = "ring-count";
static const char RING_LEFT_KEY[] = "ring-left";
static const char RING_RIGHT_KEY[] = "ring-right";
static const char TRUE_VAL[] = "TRUE";
static const char FALSE_VAL[] = "FALSE";

/* A parsed key/value pair and command (historical parser types; no function
 * of this API takes them, but programs may use them). */
typedef struct PMI2_Keyvalpair {
    const char *key;
    const char *value;
    int valueLen; /* bytes in value */
    int isCopy;   /* non-zero if value was allocated separately */
} PMI2_Keyvalpair;

typedef struct PMI2_Command {
    int nPairs;
    char *command;
    PMI2_Keyvalpair **pairs;
    int complete;
} PMI2_Command;

/* How PMI2_Job_Connect would reach the leader of another job (unused: job
 * connection is answered with an error by every server we know). */
typedef struct PMI2_Connect_comm {
    int (*read)(void *buf, int maxlen, void *ctx);
    int (*write)(const void *buf, int len, void *ctx);
    void *ctx;
    int isMaster;
} PMI2_Connect_comm_t;

/* MPICH's info object: the layout is ABI, PMI2_Job_Spawn reads key/value of
 * the elements it is given (next is not followed). */
typedef struct MPID_Info {
    int handle;
    int pobj_mutex;
    int ref_count;
    struct MPID_Info *next;
    char *key;
    char *value;
} MPID_Info;
#define PMI2U_Info MPID_Info

/* Connect and initialise.  Outputs: *spawned non-zero if this job was
 * spawned by another, *size job size, *rank this process's rank, *appnum
 * its MPMD application index (-1 in singleton mode). */
int PMI2_Init(int *spawned, int *size, int *rank, int *appnum);
/* Say goodbye to the server and close the connection. */
int PMI2_Finalize(void);
/* Non-zero after a successful PMI2_Init (singleton included). */
int PMI2_Initialized(void);
/* Ask the server to abort the job (flag non-zero: the whole job), print msg,
 * then exit(flag).  Does not return. */
int PMI2_Abort(int flag, const char msg[]);

/* Spawn count commands into a new job.  info_keyval_vectors[i] is an array of
 * info_keyval_sizes[i] structures (info_keyval_sizes may be NULL: no info);
 * preput_keyval_vector is an array of preput_keyval_size pointers.  On
 * success jobId receives the new job's id and errors[] one code per process
 * (sum of maxprocs). */
int PMI2_Job_Spawn(int count, const char *cmds[], int argcs[], const char **argvs[],
                   const int maxprocs[], const int info_keyval_sizes[],
                   const struct MPID_Info *info_keyval_vectors[], int preput_keyval_size,
                   const struct MPID_Info *preput_keyval_vector[], char jobId[],
                   int jobIdSize, int errors[]);

/* This job's id (the KVS name), truncated to jobid_size bytes with NUL. */
int PMI2_Job_GetId(char jobid[], int jobid_size);
/* The rank found at PMI2_Init. */
int PMI2_Job_GetRank(int *rank);
/* The job size found at PMI2_Init. */
int PMI2_Info_GetSize(int *size);
/* Connect to / disconnect from another job (the server's answer decides;
 * servers that do not support it make these fail). */
int PMI2_Job_Connect(const char jobid[], PMI2_Connect_comm_t *conn);
int PMI2_Job_Disconnect(const char jobid[]);

#define HAVE_PMIX_RING 1 /* PMIX_Ring below is available */
/* Collective ring exchange: *rank and *ranks describe the caller's place in
 * the ring, left/right receive the values of its neighbours (maxvalue bytes
 * each, NUL included). */
int PMIX_Ring(const char value[], int *rank, int *ranks, char left[], char right[],
              int maxvalue);

/* Put key=value (key <= PMI2_MAX_KEYLEN, value <= PMI2_MAX_VALLEN bytes);
 * visible to others after the next fence. */
int PMI2_KVS_Put(const char key[], const char value[]);
/* Collective commit of all puts. */
int PMI2_KVS_Fence(void);
/* Get key (jobid NULL: this job; src_pmi_id a hint or PMI2_ID_NULL).  Not
 * found is an error.  *vallen = value length, negated if the value had to be
 * truncated to fit maxvalue bytes (NUL included). */
int PMI2_KVS_Get(const char *jobid, int src_pmi_id, const char key[], char value[],
                 int maxvalue, int *vallen);

/* Node attributes (shared by the processes of one node).  With waitfor the
 * server answers only once the attribute exists. */
int PMI2_Info_GetNodeAttr(const char name[], char value[], int valuelen, int *found,
                          int waitfor);
int PMI2_Info_GetNodeAttrIntArray(const char name[], int array[], int arraylen,
                                  int *outlen, int *found);
int PMI2_Info_PutNodeAttr(const char name[], const char value[]);
/* Job attributes (PMI_process_mapping, universeSize, ...). */
int PMI2_Info_GetJobAttr(const char name[], char value[], int valuelen, int *found);
int PMI2_Info_GetJobAttrIntArray(const char name[], int array[], int arraylen,
                                 int *outlen, int *found);

/* Name service; info_ptr is accepted and ignored. */
int PMI2_Nameserv_publish(const char service_name[], const struct MPID_Info *info_ptr,
                          const char port[]);
int PMI2_Nameserv_lookup(const char service_name[], const struct MPID_Info *info_ptr,
                         char port[], int portLen);
int PMI2_Nameserv_unpublish(const char service_name[], const struct MPID_Info *info_ptr);

#if defined(__cplusplus)
}
#endif

#endif /* PMI2_H_INCLUDED */
