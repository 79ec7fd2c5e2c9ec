/* pmi.h - the PMI-1 client API of Loom's libpmi.so.0.
 *
 * Contract:
 *   The PMI-1 ("simple PMI", v1.1) API of MPICH's pmi.h and Slurm's
 *   <slurm/pmi.h>: the same 33 functions, constants and PMI_keyval_t, so
 *   programs written for either header compile and link unchanged.  Every
 *   function returns PMI_SUCCESS (0) or a PMI_ERR_* / PMI_FAIL code.
 *
 * Notes:
 *   - The library speaks the PMI-1 wire protocol over PMI_FD (else PMI_PORT,
 *     with the PMI_ID handshake); rank and size come from PMI_RANK/PMI_SIZE.
 *     With no server it runs as a singleton: rank 0 of 1, appnum -1.
 *   - PMI_Get_clique_size/PMI_Get_clique_ranks are derived from the job's
 *     PMI_process_mapping (MPICH's grammar); without one, the clique is the
 *     calling process alone.
 *   - PMI-1 values cannot contain spaces or newlines (the line grammar ends a
 *     value at a space): PMI_KVS_Put refuses them with PMI_ERR_INVALID_VAL.
 *   - Thread safety: each call holds one process-wide mutex around its
 *     request/response exchange.
 *
 * See also: include/pmi2.h, libpmi2/pmi1_api.c, doc/wire.md, doc/clients.md
 */
#ifndef PMI_H
#define PMI_H

#if defined(__cplusplus)
extern "C" {
#endif

#define PMI_SUCCESS 0
#define PMI_FAIL -1
#define PMI_ERR_INIT 1
#define PMI_ERR_NOMEM 2
#define PMI_ERR_INVALID_ARG 3
#define PMI_ERR_INVALID_KEY 4
#define PMI_ERR_INVALID_KEY_LENGTH 5
#define PMI_ERR_INVALID_VAL 6
#define PMI_ERR_INVALID_VAL_LENGTH 7
#define PMI_ERR_INVALID_LENGTH 8
#define PMI_ERR_INVALID_NUM_ARGS 9
#define PMI_ERR_INVALID_ARGS 10
#define PMI_ERR_INVALID_NUM_PARSED 11
#define PMI_ERR_INVALID_KEYVALP 12
#define PMI_ERR_INVALID_SIZE 13
#define PMI_ERR_INVALID_KVS 14

typedef int PMI_BOOL;
#define PMI_TRUE 1
#define PMI_FALSE 0

typedef struct PMI_keyval_t {
    char *key;
    char *val;
} PMI_keyval_t;

/* Session. */
int PMI_Init(int *spawned); /* *spawned: PMI_TRUE if spawned */
int PMI_Initialized(PMI_BOOL *initialized);
int PMI_Finalize(void);
int PMI_Get_size(int *size); /* processes in the job */
int PMI_Get_rank(int *rank); /* this process's rank */
int PMI_Get_universe_size(int *size);
int PMI_Get_appnum(int *appnum);
int PMI_Abort(int exit_code, const char error_msg[]); /* exits, never returns */

/* Name service.  port receives at most 256 bytes (NUL included). */
int PMI_Publish_name(const char service_name[], const char port[]);
int PMI_Unpublish_name(const char service_name[]);
int PMI_Lookup_name(const char service_name[], char port[]);

/* Identity of the job (the KVS name) and its maximum length. */
int PMI_Get_id(char id_str[], int length);
int PMI_Get_kvs_domain_id(char id_str[], int length);
int PMI_Get_id_length_max(int *length);

/* Collective barrier; also commits every put made before it. */
int PMI_Barrier(void);

/* Processes on this node (the caller included). */
int PMI_Get_clique_size(int *size);
int PMI_Get_clique_ranks(int ranks[], int length);

/* Key-value space. */
int PMI_KVS_Get_my_name(char kvsname[], int length);
int PMI_KVS_Get_name_length_max(int *length);
int PMI_KVS_Get_key_length_max(int *length);
int PMI_KVS_Get_value_length_max(int *length);
int PMI_KVS_Create(char kvsname[], int length);
int PMI_KVS_Destroy(const char kvsname[]);
int PMI_KVS_Put(const char kvsname[], const char key[], const char value[]);
int PMI_KVS_Commit(const char kvsname[]); /* local no-op: PMI_Barrier commits */
int PMI_KVS_Get(const char kvsname[], const char key[], char value[], int length);
/* Iteration; the end is signalled by an empty key. */
int PMI_KVS_Iter_first(const char kvsname[], char key[], int key_len, char val[],
                       int val_len);
int PMI_KVS_Iter_next(const char kvsname[], char key[], int key_len, char val[],
                      int val_len);

/* Spawn: info_keyval_vectors[i] is an array of info_keyval_sizesp[i]
 * structures; preput_keyval_vector an array of preput_keyval_size. */
int PMI_Spawn_multiple(int count, const char *cmds[], const char **argvs[],
                       const int maxprocs[], const int info_keyval_sizesp[],
                       const PMI_keyval_t *info_keyval_vectors[], int preput_keyval_size,
                       const PMI_keyval_t preput_keyval_vector[], int errors[]);

/* Launcher helpers of the historical API: no PMI-specific options exist, so
 * they parse nothing and return empty results. */
int PMI_Parse_option(int num_args, char *args[], int *num_parsed, PMI_keyval_t **keyvalp,
                     int *size);
int PMI_Args_to_keyval(int *argcp, char *((*argvp)[]), PMI_keyval_t **keyvalp, int *size);
int PMI_Free_keyvals(PMI_keyval_t keyvalp[], int size);
int PMI_Get_options(char *str, int *length);

#if defined(__cplusplus)
}
#endif

#endif /* PMI_H */
