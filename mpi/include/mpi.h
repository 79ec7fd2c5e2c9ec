/*
 * mpi.h - Loom's MPI-3.1 C binding (the only header applications include).
 *
 * Contract:
 *   - MPI_VERSION 3, MPI_SUBVERSION 1; C bindings of the environment, point-to-point,
 *     datatype, group/communicator/attribute, collective (blocking and I-variants),
 *     info and error-handler chapters.  Every MPI_X has a PMPI_X twin (profiling
 *     interface); in libmpi.so MPI_X is a weak alias of PMPI_X.
 *   - Handles are plain ints (MPICH-style), not pointers to structs.  Why:
 *       * predefined handles are compile-time constants, usable in static initialisers,
 *         switch labels and #if-free comparisons, and they need no exported data symbol
 *         (libmpi exports MPI_* and PMPI_* functions only; Open MPI's pointer handles
 *         need exported ompi_mpi_* objects);
 *       * MPI_Comm_f2c/c2f are the identity;
 *       * the bits carry a kind tag, so a handle of the wrong kind is detected at run
 *         time, and a predefined datatype carries its size (the p2p fast path needs no
 *         table lookup).
 *     Layout (mpi/core/obj.h decodes it): bit 30 = valid, bits 24..29 = kind,
 *     bit 23 = dynamic object (index into a table), low bits = index; predefined
 *     datatypes have their byte size in bits 8..15.
 *   - MPI_Status has the public fields MPI_SOURCE, MPI_TAG, MPI_ERROR; the count and
 *     the cancelled flag live in private fields.
 * Caveats: ports/accept/connect/join within one job only, no spawning yet (the
 *   dynamic-process block at the end).  MPI-IO, one-sided
 *   communication, topologies, MPI_T and the Fortran interoperability: see their blocks
 *   at the end (and mpi/README.md; the Fortran bindings are generated from this file).
 *
 * One piece (about 1700 lines): C programs include this one header (the standard
 *   names it), and gen_stubs.py, gen_mt.py and gen_largecount.py read every
 *   prototype from it; each chapter is its own block.
 */
#ifndef LOOM_MPI_H
#define LOOM_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MPI_VERSION 3
#define MPI_SUBVERSION 1
#define LOOM_MPI 1
#define LOOM_MPI_VERSION "0.1.0"

/* ---- handle types ---------------------------------------------------------- */
typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Errhandler;
typedef int MPI_Request;
typedef int MPI_Message;
typedef int MPI_Info;
typedef int MPI_Win;
typedef struct xm_file *MPI_File;

typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;
typedef int MPI_Fint;

typedef struct MPI_Status {
    int xm_count_lo;      /* private: received byte count, low 32 bits */
    int xm_count_hi_cncl; /* private: bit 0 = cancelled, bits 1.. = count high bits */
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
} MPI_Status;

/* ---- null and predefined handles ------------------------------------------ */
#define MPI_COMM_NULL       ((MPI_Comm)0x01000000)
#define MPI_COMM_WORLD      ((MPI_Comm)0x41000000)
#define MPI_COMM_SELF       ((MPI_Comm)0x41000001)

#define MPI_GROUP_NULL      ((MPI_Group)0x02000000)
#define MPI_GROUP_EMPTY     ((MPI_Group)0x42000000)

#define MPI_REQUEST_NULL    ((MPI_Request)0x07000000)
/* MPI_MESSAGE_NULL has MPI_REQUEST_NULL's value, as in MPICH: programs written against
 * MPICH compare a message handle with MPI_REQUEST_NULL (MPICH's threads/pt2pt
 * mt_improbe_* tests check that a message is "MPI_REQUEST_NULL" before MPI_Improbe and
 * counted an error per call with a distinct value).  Both are invalid handles, so
 * nothing confuses them: a message handle is looked up by its kind bits. */
#define MPI_MESSAGE_NULL    ((MPI_Message)0x07000000)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x4a000000)
#define MPI_INFO_NULL       ((MPI_Info)0x08000000)
#define MPI_INFO_ENV        ((MPI_Info)0x48000000)
#define MPI_WIN_NULL        ((MPI_Win)0x0b000000)
#define MPI_FILE_NULL       ((MPI_File)0)

#define MPI_ERRHANDLER_NULL  ((MPI_Errhandler)0x06000000)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x46000000)
#define MPI_ERRORS_RETURN    ((MPI_Errhandler)0x46000001)

#define MPI_OP_NULL    ((MPI_Op)0x05000000)
#define MPI_MAX        ((MPI_Op)0x45000001)
#define MPI_MIN        ((MPI_Op)0x45000002)
#define MPI_SUM        ((MPI_Op)0x45000003)
#define MPI_PROD       ((MPI_Op)0x45000004)
#define MPI_LAND       ((MPI_Op)0x45000005)
#define MPI_BAND       ((MPI_Op)0x45000006)
#define MPI_LOR        ((MPI_Op)0x45000007)
#define MPI_BOR        ((MPI_Op)0x45000008)
#define MPI_LXOR       ((MPI_Op)0x45000009)
#define MPI_BXOR       ((MPI_Op)0x4500000a)
#define MPI_MINLOC     ((MPI_Op)0x4500000b)
#define MPI_MAXLOC     ((MPI_Op)0x4500000c)
#define MPI_REPLACE    ((MPI_Op)0x4500000d)
#define MPI_NO_OP      ((MPI_Op)0x4500000e)

/* Predefined datatypes: 0x43000000 | size << 8 | index (index unique, < 256). */
#define XM_DT_(size, idx) ((MPI_Datatype)(0x43000000 | ((size) << 8) | (idx)))
#define MPI_DATATYPE_NULL     ((MPI_Datatype)0x03000000)
#define MPI_CHAR              XM_DT_(1, 0x01)
#define MPI_SIGNED_CHAR       XM_DT_(1, 0x02)
#define MPI_UNSIGNED_CHAR     XM_DT_(1, 0x03)
#define MPI_BYTE              XM_DT_(1, 0x04)
#define MPI_WCHAR             XM_DT_(4, 0x05)
#define MPI_SHORT             XM_DT_(2, 0x06)
#define MPI_UNSIGNED_SHORT    XM_DT_(2, 0x07)
#define MPI_INT               XM_DT_(4, 0x08)
#define MPI_UNSIGNED          XM_DT_(4, 0x09)
#define MPI_LONG              XM_DT_(8, 0x0a)
#define MPI_UNSIGNED_LONG     XM_DT_(8, 0x0b)
#define MPI_LONG_LONG_INT     XM_DT_(8, 0x0c)
#define MPI_LONG_LONG         MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG XM_DT_(8, 0x0d)
#define MPI_FLOAT             XM_DT_(4, 0x0e)
#define MPI_DOUBLE            XM_DT_(8, 0x0f)
#define MPI_LONG_DOUBLE       XM_DT_(16, 0x10)
#define MPI_PACKED            XM_DT_(1, 0x11)
#define MPI_C_BOOL            XM_DT_(1, 0x12)
#define MPI_INT8_T            XM_DT_(1, 0x13)
#define MPI_INT16_T           XM_DT_(2, 0x14)
#define MPI_INT32_T           XM_DT_(4, 0x15)
#define MPI_INT64_T           XM_DT_(8, 0x16)
#define MPI_UINT8_T           XM_DT_(1, 0x17)
#define MPI_UINT16_T          XM_DT_(2, 0x18)
#define MPI_UINT32_T          XM_DT_(4, 0x19)
#define MPI_UINT64_T          XM_DT_(8, 0x1a)
#define MPI_C_COMPLEX         XM_DT_(8, 0x1b)
#define MPI_C_FLOAT_COMPLEX   XM_DT_(8, 0x1c)
#define MPI_C_DOUBLE_COMPLEX  XM_DT_(16, 0x1d)
#define MPI_C_LONG_DOUBLE_COMPLEX XM_DT_(32, 0x1e)
#define MPI_AINT              XM_DT_(8, 0x1f)
#define MPI_OFFSET            XM_DT_(8, 0x20)
#define MPI_COUNT             XM_DT_(8, 0x21)
/* pair types for MINLOC/MAXLOC (size = sizeof the C struct) */
#define MPI_FLOAT_INT         XM_DT_(8, 0x22)
#define MPI_DOUBLE_INT        XM_DT_(16, 0x23)
#define MPI_LONG_INT          XM_DT_(16, 0x24)
#define MPI_2INT              XM_DT_(8, 0x25)
#define MPI_SHORT_INT         XM_DT_(8, 0x26)
#define MPI_LONG_DOUBLE_INT   XM_DT_(32, 0x27)
/* deprecated bound markers (size 0) and Fortran-named types usable from C */
#define MPI_LB                XM_DT_(0, 0x28)
#define MPI_UB                XM_DT_(0, 0x29)
#define MPI_INTEGER           XM_DT_(4, 0x2a)
#define MPI_REAL              XM_DT_(4, 0x2b)
#define MPI_DOUBLE_PRECISION  XM_DT_(8, 0x2c)
#define MPI_LOGICAL           XM_DT_(4, 0x2d)
#define MPI_CHARACTER         XM_DT_(1, 0x2e)
#define MPI_2INTEGER          XM_DT_(8, 0x2f)
#define MPI_2REAL             XM_DT_(8, 0x30)
#define MPI_2DOUBLE_PRECISION XM_DT_(16, 0x31)
#define MPI_COMPLEX           XM_DT_(8, 0x32)
#define MPI_DOUBLE_COMPLEX    XM_DT_(16, 0x33)
#define MPI_CXX_BOOL          XM_DT_(1, 0x34)
/* (issue 21) the remaining optional named types of
 * MPI-3.1 §3.2.2 and §17.2.6.  REAL16/COMPLEX32 are IEEE quad (gfortran's REAL*16),
 * INTEGER16 a 128-bit integer. */
#define MPI_CXX_FLOAT_COMPLEX       XM_DT_(8, 0x35)
#define MPI_CXX_DOUBLE_COMPLEX      XM_DT_(16, 0x36)
#define MPI_CXX_LONG_DOUBLE_COMPLEX XM_DT_(32, 0x37)
#define MPI_REAL4             XM_DT_(4, 0x38)
#define MPI_REAL8             XM_DT_(8, 0x39)
#define MPI_REAL16            XM_DT_(16, 0x3a)
#define MPI_INTEGER1          XM_DT_(1, 0x3b)
#define MPI_INTEGER2          XM_DT_(2, 0x3c)
#define MPI_INTEGER4          XM_DT_(4, 0x3d)
#define MPI_INTEGER8          XM_DT_(8, 0x3e)
#define MPI_INTEGER16         XM_DT_(16, 0x3f)
#define MPI_COMPLEX8          XM_DT_(8, 0x40)
#define MPI_COMPLEX16         XM_DT_(16, 0x41)
#define MPI_COMPLEX32         XM_DT_(32, 0x42)
#define XM_DT_LAST_PREDEFINED 0x42

/* ---- constants --------------------------------------------------------------- */
#define MPI_SUCCESS 0
#define MPI_ERR_BUFFER 1
#define MPI_ERR_COUNT 2
#define MPI_ERR_TYPE 3
#define MPI_ERR_TAG 4
#define MPI_ERR_COMM 5
#define MPI_ERR_RANK 6
#define MPI_ERR_REQUEST 7
#define MPI_ERR_ROOT 8
#define MPI_ERR_GROUP 9
#define MPI_ERR_OP 10
#define MPI_ERR_TOPOLOGY 11
#define MPI_ERR_DIMS 12
#define MPI_ERR_ARG 13
#define MPI_ERR_UNKNOWN 14
#define MPI_ERR_TRUNCATE 15
#define MPI_ERR_OTHER 16
#define MPI_ERR_INTERN 17
#define MPI_ERR_IN_STATUS 18
#define MPI_ERR_PENDING 19
#define MPI_ERR_KEYVAL 20
#define MPI_ERR_NO_MEM 21
#define MPI_ERR_BASE 22
#define MPI_ERR_INFO_KEY 23
#define MPI_ERR_INFO_VALUE 24
#define MPI_ERR_INFO_NOKEY 25
#define MPI_ERR_SPAWN 26
#define MPI_ERR_PORT 27
#define MPI_ERR_SERVICE 28
#define MPI_ERR_NAME 29
#define MPI_ERR_WIN 30
#define MPI_ERR_SIZE 31
#define MPI_ERR_DISP 32
#define MPI_ERR_INFO 33
#define MPI_ERR_LOCKTYPE 34
#define MPI_ERR_ASSERT 35
#define MPI_ERR_RMA_CONFLICT 36
#define MPI_ERR_RMA_SYNC 37
#define MPI_ERR_FILE 38
#define MPI_ERR_NOT_SAME 39
#define MPI_ERR_AMODE 40
#define MPI_ERR_UNSUPPORTED_DATAREP 41
#define MPI_ERR_UNSUPPORTED_OPERATION 42
#define MPI_ERR_NO_SUCH_FILE 43
#define MPI_ERR_FILE_EXISTS 44
#define MPI_ERR_BAD_FILE 45
#define MPI_ERR_ACCESS 46
#define MPI_ERR_NO_SPACE 47
#define MPI_ERR_QUOTA 48
#define MPI_ERR_READ_ONLY 49
#define MPI_ERR_FILE_IN_USE 50
#define MPI_ERR_DUP_DATAREP 51
#define MPI_ERR_CONVERSION 52
#define MPI_ERR_IO 53
#define MPI_ERR_RMA_RANGE 54
#define MPI_ERR_RMA_ATTACH 55
#define MPI_ERR_RMA_SHARED 56
#define MPI_ERR_RMA_FLAVOR 57
#define MPI_T_ERR_INVALID 58
#define MPI_ERR_LASTCODE 0x3fffffff

#define MPI_PROC_NULL   (-1)
#define MPI_ANY_SOURCE  (-2)
#define MPI_ROOT        (-3)
#define MPI_ANY_TAG     (-1)
#define MPI_UNDEFINED   (-32766)
#define MPI_KEYVAL_INVALID 0x09000000

#define MPI_BOTTOM      ((void *)0)
#define MPI_IN_PLACE    ((void *)-1)
#define MPI_STATUS_IGNORE   ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE ((MPI_Status *)1)
#define MPI_ERRCODES_IGNORE ((int *)0)
#define MPI_ARGV_NULL   ((char **)0)
#define MPI_ARGVS_NULL  ((char ***)0)
#define MPI_UNWEIGHTED  ((int *)1)
#define MPI_WEIGHTS_EMPTY ((int *)2)

#define MPI_MAX_PROCESSOR_NAME 256
#define MPI_MAX_ERROR_STRING 512
#define MPI_MAX_OBJECT_NAME 128
#define MPI_MAX_LIBRARY_VERSION_STRING 256
#define MPI_MAX_INFO_KEY 255
#define MPI_MAX_INFO_VAL 1024
#define MPI_MAX_PORT_NAME 256
#define MPI_MAX_DATAREP_STRING 128
#define MPI_BSEND_OVERHEAD 96

/* predefined attribute keys (on MPI_COMM_WORLD) */
#define MPI_TAG_UB          0x49000001
#define MPI_HOST            0x49000002
#define MPI_IO              0x49000003
#define MPI_WTIME_IS_GLOBAL 0x49000004
#define MPI_UNIVERSE_SIZE   0x49000005
#define MPI_LASTUSEDCODE    0x49000006
#define MPI_APPNUM          0x49000007

/* comparison results */
#define MPI_IDENT 0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR 2
#define MPI_UNEQUAL 3

/* thread levels */
#define MPI_THREAD_SINGLE 0
#define MPI_THREAD_FUNNELED 1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE 3

/* topologies and split types */
#define MPI_GRAPH 1
#define MPI_CART 2
#define MPI_DIST_GRAPH 3
#define MPI_COMM_TYPE_SHARED 1

/* datatype combiners */
#define MPI_COMBINER_NAMED 1
#define MPI_COMBINER_DUP 2
#define MPI_COMBINER_CONTIGUOUS 3
#define MPI_COMBINER_VECTOR 4
#define MPI_COMBINER_HVECTOR_INTEGER 5
#define MPI_COMBINER_HVECTOR 6
#define MPI_COMBINER_INDEXED 7
#define MPI_COMBINER_HINDEXED_INTEGER 8
#define MPI_COMBINER_HINDEXED 9
#define MPI_COMBINER_INDEXED_BLOCK 10
#define MPI_COMBINER_STRUCT_INTEGER 11
#define MPI_COMBINER_STRUCT 12
#define MPI_COMBINER_SUBARRAY 13
#define MPI_COMBINER_DARRAY 14
#define MPI_COMBINER_F90_REAL 15
#define MPI_COMBINER_F90_COMPLEX 16
#define MPI_COMBINER_F90_INTEGER 17
#define MPI_COMBINER_RESIZED 18
#define MPI_COMBINER_HINDEXED_BLOCK 19

#define MPI_ORDER_C 56
#define MPI_ORDER_FORTRAN 57
#define MPI_DISTRIBUTE_BLOCK 121
#define MPI_DISTRIBUTE_CYCLIC 122
#define MPI_DISTRIBUTE_NONE 123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

#define MPI_TYPECLASS_REAL 1
#define MPI_TYPECLASS_INTEGER 2
#define MPI_TYPECLASS_COMPLEX 3

/* ---- (issue 21) error classes of the tool interface,
 * Fortran status size, generalized requests, MPI_T constants -------------------- */
#define MPI_T_ERR_MEMORY 59
#define MPI_T_ERR_NOT_INITIALIZED 60
#define MPI_T_ERR_CANNOT_INIT 61
#define MPI_T_ERR_INVALID_INDEX 62
#define MPI_T_ERR_INVALID_ITEM 63
#define MPI_T_ERR_INVALID_HANDLE 64
#define MPI_T_ERR_OUT_OF_HANDLES 65
#define MPI_T_ERR_OUT_OF_SESSIONS 66
#define MPI_T_ERR_INVALID_SESSION 67
#define MPI_T_ERR_CVAR_SET_NOT_NOW 68
#define MPI_T_ERR_CVAR_SET_NEVER 69
#define MPI_T_ERR_PVAR_NO_STARTSTOP 70
#define MPI_T_ERR_PVAR_NO_WRITE 71
#define MPI_T_ERR_PVAR_NO_ATOMIC 72
#define MPI_T_ERR_INVALID_NAME 73
/* MPI-4.0 error classes of the session calls */
#define MPI_ERR_SESSION 74        /* an invalid session handle */
#define XM_ERR_LAST_PREDEFINED 74 /* user classes/codes: MPI_ERR_LASTCODE + 1 on */

/* a Fortran status is MPI_F_STATUS_SIZE MPI_Fints (the C struct's five ints) */
#define MPI_F_STATUS_SIZE 5
#define MPI_F_SOURCE 2
#define MPI_F_TAG 3
#define MPI_F_ERROR 4
/* MPI_F_STATUS_IGNORE, MPI_F_STATUSES_IGNORE: the Fortran interoperability block */

/* MPI_T (tool information interface, MPI-3.1 chapter 14; mpi/api/mpit.c) */
#define MPI_T_ENUM_NULL      ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)
#define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)1)
#define MPI_T_VERBOSITY_USER_BASIC 1
#define MPI_T_VERBOSITY_USER_DETAIL 2
#define MPI_T_VERBOSITY_USER_ALL 3
#define MPI_T_VERBOSITY_TUNER_BASIC 4
#define MPI_T_VERBOSITY_TUNER_DETAIL 5
#define MPI_T_VERBOSITY_TUNER_ALL 6
#define MPI_T_VERBOSITY_MPIDEV_BASIC 7
#define MPI_T_VERBOSITY_MPIDEV_DETAIL 8
#define MPI_T_VERBOSITY_MPIDEV_ALL 9
#define MPI_T_BIND_NO_OBJECT 0
#define MPI_T_BIND_MPI_COMM 1
#define MPI_T_BIND_MPI_DATATYPE 2
#define MPI_T_BIND_MPI_ERRHANDLER 3
#define MPI_T_BIND_MPI_FILE 4
#define MPI_T_BIND_MPI_GROUP 5
#define MPI_T_BIND_MPI_OP 6
#define MPI_T_BIND_MPI_REQUEST 7
#define MPI_T_BIND_MPI_WIN 8
#define MPI_T_BIND_MPI_MESSAGE 9
#define MPI_T_BIND_MPI_INFO 10
#define MPI_T_SCOPE_CONSTANT 0
#define MPI_T_SCOPE_READONLY 1
#define MPI_T_SCOPE_LOCAL 2
#define MPI_T_SCOPE_GROUP 3
#define MPI_T_SCOPE_GROUP_EQ 4
#define MPI_T_SCOPE_ALL 5
#define MPI_T_SCOPE_ALL_EQ 6
#define MPI_T_PVAR_CLASS_STATE 0
#define MPI_T_PVAR_CLASS_LEVEL 1
#define MPI_T_PVAR_CLASS_SIZE 2
#define MPI_T_PVAR_CLASS_PERCENTAGE 3
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 4
#define MPI_T_PVAR_CLASS_LOWWATERMARK 5
#define MPI_T_PVAR_CLASS_COUNTER 6
#define MPI_T_PVAR_CLASS_AGGREGATE 7
#define MPI_T_PVAR_CLASS_TIMER 8
#define MPI_T_PVAR_CLASS_GENERIC 9

/* ---- callback types and predefined callbacks ---------------------------------- */
typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *dt);
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                                        void *attr_in, void *attr_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int keyval, void *attr,
                                          void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int keyval, void *extra_state,
                                        void *attr_in, void *attr_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype type, int keyval, void *attr,
                                          void *extra_state);
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                              void *attr_in, void *attr_out, int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void *attr, void *extra_state);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *err, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef void MPI_Handler_function(MPI_Comm *comm, int *err, ...);
/* (issue 21) */
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
typedef struct xm_t_enum *MPI_T_enum;
typedef struct xm_t_cvar_handle *MPI_T_cvar_handle;
typedef struct xm_t_pvar_handle *MPI_T_pvar_handle;
typedef struct xm_t_pvar_session *MPI_T_pvar_session;

/* Sentinels recognised by the library (no exported data or helper symbols needed). */
#define MPI_COMM_NULL_COPY_FN   ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_DUP_FN         ((MPI_Comm_copy_attr_function *)1)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_TYPE_NULL_COPY_FN   ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_DUP_FN         ((MPI_Type_copy_attr_function *)1)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_NULL_COPY_FN        ((MPI_Copy_function *)0)
#define MPI_DUP_FN              ((MPI_Copy_function *)1)
#define MPI_NULL_DELETE_FN      ((MPI_Delete_function *)0)

/* ---- prototypes: XM_API_(ret, Name, args) declares MPI_Name and PMPI_Name ------ */
#define XM_API_(ret, name, args) ret MPI_##name args; ret PMPI_##name args;

/* environment */
XM_API_(int, Init, (int *argc, char ***argv))
XM_API_(int, Init_thread, (int *argc, char ***argv, int required, int *provided))
XM_API_(int, Finalize, (void))
XM_API_(int, Initialized, (int *flag))
XM_API_(int, Finalized, (int *flag))
XM_API_(int, Query_thread, (int *provided))
XM_API_(int, Is_thread_main, (int *flag))
XM_API_(int, Abort, (MPI_Comm comm, int errorcode))
XM_API_(double, Wtime, (void))
XM_API_(double, Wtick, (void))
XM_API_(int, Get_processor_name, (char *name, int *resultlen))
XM_API_(int, Get_version, (int *version, int *subversion))
XM_API_(int, Get_library_version, (char *version, int *resultlen))
XM_API_(int, Error_string, (int errorcode, char *string, int *resultlen))
XM_API_(int, Error_class, (int errorcode, int *errorclass))
XM_API_(int, Pcontrol, (const int level, ...))
XM_API_(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr))
XM_API_(int, Free_mem, (void *base))
XM_API_(int, Comm_create_errhandler, (MPI_Comm_errhandler_function *fn, MPI_Errhandler *eh))
XM_API_(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler eh))
XM_API_(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *eh))
XM_API_(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode))
XM_API_(int, Errhandler_free, (MPI_Errhandler *eh))
XM_API_(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler eh))
XM_API_(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *eh))

/* point-to-point */
XM_API_(int, Send, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm))
XM_API_(int, Ssend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm))
XM_API_(int, Rsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm))
XM_API_(int, Bsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm))
XM_API_(int, Recv, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                    MPI_Status *status))
XM_API_(int, Isend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                     MPI_Comm comm, MPI_Request *req))
XM_API_(int, Issend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                      MPI_Comm comm, MPI_Request *req))
XM_API_(int, Irsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                      MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ibsend, (const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                      MPI_Comm comm, MPI_Request *req))
XM_API_(int, Irecv, (void *buf, int count, MPI_Datatype dt, int source, int tag, MPI_Comm comm,
                     MPI_Request *req))
XM_API_(int, Send_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                         MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ssend_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                          MPI_Comm comm, MPI_Request *req))
XM_API_(int, Rsend_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                          MPI_Comm comm, MPI_Request *req))
XM_API_(int, Bsend_init, (const void *buf, int count, MPI_Datatype dt, int dest, int tag,
                          MPI_Comm comm, MPI_Request *req))
XM_API_(int, Recv_init, (void *buf, int count, MPI_Datatype dt, int source, int tag,
                         MPI_Comm comm, MPI_Request *req))
XM_API_(int, Start, (MPI_Request *req))
XM_API_(int, Startall, (int count, MPI_Request reqs[]))
XM_API_(int, Buffer_attach, (void *buffer, int size))
XM_API_(int, Buffer_detach, (void *buffer_addr, int *size))
XM_API_(int, Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                        int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                        int source, int recvtag, MPI_Comm comm, MPI_Status *status))
XM_API_(int, Sendrecv_replace, (void *buf, int count, MPI_Datatype dt, int dest, int sendtag,
                                int source, int recvtag, MPI_Comm comm, MPI_Status *status))
XM_API_(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status))
XM_API_(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status))
XM_API_(int, Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status))
XM_API_(int, Improbe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *msg,
                       MPI_Status *status))
XM_API_(int, Mrecv, (void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Status *status))
XM_API_(int, Imrecv, (void *buf, int count, MPI_Datatype dt, MPI_Message *msg, MPI_Request *req))
XM_API_(int, Wait, (MPI_Request *req, MPI_Status *status))
XM_API_(int, Test, (MPI_Request *req, int *flag, MPI_Status *status))
XM_API_(int, Waitall, (int count, MPI_Request reqs[], MPI_Status *statuses))
XM_API_(int, Testall, (int count, MPI_Request reqs[], int *flag, MPI_Status *statuses))
XM_API_(int, Waitany, (int count, MPI_Request reqs[], int *index, MPI_Status *status))
XM_API_(int, Testany, (int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status))
XM_API_(int, Waitsome, (int incount, MPI_Request reqs[], int *outcount, int indices[],
                        MPI_Status *statuses))
XM_API_(int, Testsome, (int incount, MPI_Request reqs[], int *outcount, int indices[],
                        MPI_Status *statuses))
XM_API_(int, Request_free, (MPI_Request *req))
XM_API_(int, Request_get_status, (MPI_Request req, int *flag, MPI_Status *status))
XM_API_(int, Cancel, (MPI_Request *req))
XM_API_(int, Test_cancelled, (const MPI_Status *status, int *flag))
XM_API_(int, Get_count, (const MPI_Status *status, MPI_Datatype dt, int *count))
XM_API_(int, Get_elements, (const MPI_Status *status, MPI_Datatype dt, int *count))
XM_API_(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype dt, MPI_Count *count))
XM_API_(int, Status_set_elements, (MPI_Status *status, MPI_Datatype dt, int count))
XM_API_(int, Status_set_elements_x, (MPI_Status *status, MPI_Datatype dt, MPI_Count count))
XM_API_(int, Status_set_cancelled, (MPI_Status *status, int flag))

/* datatypes */
XM_API_(int, Type_size, (MPI_Datatype dt, int *size))
XM_API_(int, Type_size_x, (MPI_Datatype dt, MPI_Count *size))
XM_API_(int, Type_get_extent, (MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent))
XM_API_(int, Type_get_extent_x, (MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent))
XM_API_(int, Type_get_true_extent, (MPI_Datatype dt, MPI_Aint *lb, MPI_Aint *extent))
XM_API_(int, Type_get_true_extent_x, (MPI_Datatype dt, MPI_Count *lb, MPI_Count *extent))
XM_API_(int, Type_extent, (MPI_Datatype dt, MPI_Aint *extent))
XM_API_(int, Type_lb, (MPI_Datatype dt, MPI_Aint *lb))
XM_API_(int, Type_ub, (MPI_Datatype dt, MPI_Aint *ub))
XM_API_(int, Type_contiguous, (int count, MPI_Datatype old, MPI_Datatype *newtype))
XM_API_(int, Type_vector, (int count, int blocklength, int stride, MPI_Datatype old,
                           MPI_Datatype *newtype))
XM_API_(int, Type_hvector, (int count, int blocklength, MPI_Aint stride, MPI_Datatype old,
                            MPI_Datatype *newtype))
XM_API_(int, Type_create_hvector, (int count, int blocklength, MPI_Aint stride,
                                   MPI_Datatype old, MPI_Datatype *newtype))
XM_API_(int, Type_indexed, (int count, const int blocklengths[], const int displs[],
                            MPI_Datatype old, MPI_Datatype *newtype))
XM_API_(int, Type_hindexed, (int count, const int blocklengths[], const MPI_Aint displs[],
                             MPI_Datatype old, MPI_Datatype *newtype))
XM_API_(int, Type_create_hindexed, (int count, const int blocklengths[], const MPI_Aint displs[],
                                    MPI_Datatype old, MPI_Datatype *newtype))
XM_API_(int, Type_create_indexed_block, (int count, int blocklength, const int displs[],
                                         MPI_Datatype old, MPI_Datatype *newtype))
XM_API_(int, Type_create_hindexed_block, (int count, int blocklength, const MPI_Aint displs[],
                                          MPI_Datatype old, MPI_Datatype *newtype))
XM_API_(int, Type_struct, (int count, const int blocklengths[], const MPI_Aint displs[],
                           const MPI_Datatype types[], MPI_Datatype *newtype))
XM_API_(int, Type_create_struct, (int count, const int blocklengths[], const MPI_Aint displs[],
                                  const MPI_Datatype types[], MPI_Datatype *newtype))
XM_API_(int, Type_create_resized, (MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                                   MPI_Datatype *newtype))
XM_API_(int, Type_create_subarray, (int ndims, const int sizes[], const int subsizes[],
                                    const int starts[], int order, MPI_Datatype old,
                                    MPI_Datatype *newtype))
XM_API_(int, Type_create_darray, (int size, int rank, int ndims, const int gsizes[],
                                  const int distribs[], const int dargs[], const int psizes[],
                                  int order, MPI_Datatype old, MPI_Datatype *newtype))
XM_API_(int, Type_dup, (MPI_Datatype dt, MPI_Datatype *newtype))
XM_API_(int, Type_commit, (MPI_Datatype *dt))
XM_API_(int, Type_free, (MPI_Datatype *dt))
XM_API_(int, Type_get_envelope, (MPI_Datatype dt, int *num_integers, int *num_addresses,
                                 int *num_datatypes, int *combiner))
XM_API_(int, Type_get_contents, (MPI_Datatype dt, int max_integers, int max_addresses,
                                 int max_datatypes, int integers[], MPI_Aint addresses[],
                                 MPI_Datatype datatypes[]))
XM_API_(int, Type_set_name, (MPI_Datatype dt, const char *name))
XM_API_(int, Type_get_name, (MPI_Datatype dt, char *name, int *resultlen))
XM_API_(int, Type_match_size, (int typeclass, int size, MPI_Datatype *dt))
XM_API_(int, Type_create_keyval, (MPI_Type_copy_attr_function *copy_fn,
                                  MPI_Type_delete_attr_function *delete_fn, int *keyval,
                                  void *extra_state))
XM_API_(int, Type_free_keyval, (int *keyval))
XM_API_(int, Type_set_attr, (MPI_Datatype dt, int keyval, void *attr))
XM_API_(int, Type_get_attr, (MPI_Datatype dt, int keyval, void *attr, int *flag))
XM_API_(int, Type_delete_attr, (MPI_Datatype dt, int keyval))
XM_API_(int, Get_address, (const void *location, MPI_Aint *address))
XM_API_(int, Address, (void *location, MPI_Aint *address))
XM_API_(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp))
XM_API_(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2))
XM_API_(int, Pack, (const void *inbuf, int incount, MPI_Datatype dt, void *outbuf, int outsize,
                    int *position, MPI_Comm comm))
XM_API_(int, Unpack, (const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                      MPI_Datatype dt, MPI_Comm comm))
XM_API_(int, Pack_size, (int incount, MPI_Datatype dt, MPI_Comm comm, int *size))
XM_API_(int, Pack_external, (const char datarep[], const void *inbuf, int incount,
                             MPI_Datatype dt, void *outbuf, MPI_Aint outsize,
                             MPI_Aint *position))
XM_API_(int, Unpack_external, (const char datarep[], const void *inbuf, MPI_Aint insize,
                               MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype dt))
XM_API_(int, Pack_external_size, (const char datarep[], int incount, MPI_Datatype dt,
                                  MPI_Aint *size))

/* groups */
XM_API_(int, Comm_group, (MPI_Comm comm, MPI_Group *group))
XM_API_(int, Group_size, (MPI_Group group, int *size))
XM_API_(int, Group_rank, (MPI_Group group, int *rank))
XM_API_(int, Group_translate_ranks, (MPI_Group g1, int n, const int ranks1[], MPI_Group g2,
                                     int ranks2[]))
XM_API_(int, Group_compare, (MPI_Group g1, MPI_Group g2, int *result))
XM_API_(int, Group_union, (MPI_Group g1, MPI_Group g2, MPI_Group *newgroup))
XM_API_(int, Group_intersection, (MPI_Group g1, MPI_Group g2, MPI_Group *newgroup))
XM_API_(int, Group_difference, (MPI_Group g1, MPI_Group g2, MPI_Group *newgroup))
XM_API_(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
XM_API_(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup))
XM_API_(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
XM_API_(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup))
XM_API_(int, Group_free, (MPI_Group *group))

/* communicators */
XM_API_(int, Comm_size, (MPI_Comm comm, int *size))
XM_API_(int, Comm_rank, (MPI_Comm comm, int *rank))
XM_API_(int, Comm_compare, (MPI_Comm c1, MPI_Comm c2, int *result))
XM_API_(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm))
XM_API_(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm))
XM_API_(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *req))
XM_API_(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm))
XM_API_(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm))
XM_API_(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm))
XM_API_(int, Comm_split_type, (MPI_Comm comm, int split_type, int key, MPI_Info info,
                               MPI_Comm *newcomm))
XM_API_(int, Comm_free, (MPI_Comm *comm))
XM_API_(int, Comm_test_inter, (MPI_Comm comm, int *flag))
XM_API_(int, Comm_remote_size, (MPI_Comm comm, int *size))
XM_API_(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group))
XM_API_(int, Comm_set_name, (MPI_Comm comm, const char *name))
XM_API_(int, Comm_get_name, (MPI_Comm comm, char *name, int *resultlen))
XM_API_(int, Comm_set_info, (MPI_Comm comm, MPI_Info info))
XM_API_(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info))
XM_API_(int, Comm_create_keyval, (MPI_Comm_copy_attr_function *copy_fn,
                                  MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                                  void *extra_state))
XM_API_(int, Comm_free_keyval, (int *keyval))
XM_API_(int, Comm_set_attr, (MPI_Comm comm, int keyval, void *attr))
XM_API_(int, Comm_get_attr, (MPI_Comm comm, int keyval, void *attr, int *flag))
XM_API_(int, Comm_delete_attr, (MPI_Comm comm, int keyval))
XM_API_(int, Keyval_create, (MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn,
                             int *keyval, void *extra_state))
XM_API_(int, Keyval_free, (int *keyval))
XM_API_(int, Attr_put, (MPI_Comm comm, int keyval, void *attr))
XM_API_(int, Attr_get, (MPI_Comm comm, int keyval, void *attr, int *flag))
XM_API_(int, Attr_delete, (MPI_Comm comm, int keyval))
XM_API_(int, Topo_test, (MPI_Comm comm, int *status))

/* info */
XM_API_(int, Info_create, (MPI_Info *info))
XM_API_(int, Info_dup, (MPI_Info info, MPI_Info *newinfo))
XM_API_(int, Info_free, (MPI_Info *info))
XM_API_(int, Info_set, (MPI_Info info, const char *key, const char *value))
XM_API_(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag))
XM_API_(int, Info_delete, (MPI_Info info, const char *key))
XM_API_(int, Info_get_nkeys, (MPI_Info info, int *nkeys))
XM_API_(int, Info_get_nthkey, (MPI_Info info, int n, char *key))
XM_API_(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag))

/* operations */
XM_API_(int, Op_create, (MPI_User_function *fn, int commute, MPI_Op *op))
XM_API_(int, Op_free, (MPI_Op *op))
XM_API_(int, Op_commutative, (MPI_Op op, int *commute))
XM_API_(int, Reduce_local, (const void *inbuf, void *inoutbuf, int count, MPI_Datatype dt,
                            MPI_Op op))

/* collectives */
XM_API_(int, Barrier, (MPI_Comm comm))
XM_API_(int, Bcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm))
XM_API_(int, Reduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                      int root, MPI_Comm comm))
XM_API_(int, Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm))
XM_API_(int, Gather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
XM_API_(int, Gatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                       int root, MPI_Comm comm))
XM_API_(int, Scatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
XM_API_(int, Scatterv, (const void *sendbuf, const int sendcounts[], const int displs[],
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm))
XM_API_(int, Allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
XM_API_(int, Allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, const int recvcounts[], const int displs[],
                          MPI_Datatype recvtype, MPI_Comm comm))
XM_API_(int, Alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm))
XM_API_(int, Alltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                         MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm))
XM_API_(int, Alltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                         const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm))
XM_API_(int, Reduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[],
                              MPI_Datatype dt, MPI_Op op, MPI_Comm comm))
XM_API_(int, Reduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount,
                                    MPI_Datatype dt, MPI_Op op, MPI_Comm comm))
XM_API_(int, Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                    MPI_Comm comm))
XM_API_(int, Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                      MPI_Comm comm))
XM_API_(int, Ibarrier, (MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ibcast, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                      MPI_Request *req))
XM_API_(int, Ireduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                       int root, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Iallreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                          MPI_Op op, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Igather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                       MPI_Request *req))
XM_API_(int, Igatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                        int root, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Iscatter, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                        MPI_Request *req))
XM_API_(int, Iscatterv, (const void *sendbuf, const int sendcounts[], const int displs[],
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Iallgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *req))
XM_API_(int, Iallgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, const int recvcounts[], const int displs[],
                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ialltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                         MPI_Request *req))
XM_API_(int, Ialltoallv, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                          MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                          const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                          MPI_Request *req))
XM_API_(int, Ireduce_scatter, (const void *sendbuf, void *recvbuf, const int recvcounts[],
                               MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ireduce_scatter_block, (const void *sendbuf, void *recvbuf, int recvcount,
                                     MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                                     MPI_Request *req))
XM_API_(int, Iscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                     MPI_Comm comm, MPI_Request *req))
XM_API_(int, Iexscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt, MPI_Op op,
                       MPI_Comm comm, MPI_Request *req))

/* handle conversion (C side; Fortran handles equal C handles) */
XM_API_(MPI_Fint, Comm_c2f, (MPI_Comm comm))
XM_API_(MPI_Comm, Comm_f2c, (MPI_Fint comm))
XM_API_(MPI_Fint, Type_c2f, (MPI_Datatype dt))
XM_API_(MPI_Datatype, Type_f2c, (MPI_Fint dt))
XM_API_(MPI_Fint, Request_c2f, (MPI_Request req))
XM_API_(MPI_Request, Request_f2c, (MPI_Fint req))
XM_API_(MPI_Fint, Op_c2f, (MPI_Op op))
XM_API_(MPI_Op, Op_f2c, (MPI_Fint op))
XM_API_(MPI_Fint, Group_c2f, (MPI_Group group))
XM_API_(MPI_Group, Group_f2c, (MPI_Fint group))

/* ---- MPI-IO (mpi/io/, api/file.c): constants, callback types, prototypes ----------
 * The file error classes (MPI_ERR_FILE .. MPI_ERR_IO) are in the constants above. */
#define MPI_MODE_RDONLY          2
#define MPI_MODE_RDWR            8
#define MPI_MODE_WRONLY          4
#define MPI_MODE_CREATE          1
#define MPI_MODE_EXCL           64
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN    32
#define MPI_MODE_APPEND        128
#define MPI_MODE_SEQUENTIAL    256
#define MPI_SEEK_SET 600
#define MPI_SEEK_CUR 602
#define MPI_SEEK_END 604
#define MPI_DISPLACEMENT_CURRENT (-54278278)
typedef void MPI_File_errhandler_function(MPI_File *file, int *err, ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef int MPI_Datarep_conversion_function(void *userbuf, MPI_Datatype dt, int count,
                                            void *filebuf, MPI_Offset position,
                                            void *extra_state);
typedef int MPI_Datarep_extent_function(MPI_Datatype dt, MPI_Aint *extent,
                                        void *extra_state);
#define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)
XM_API_(int, File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                         MPI_File *fh))
XM_API_(int, File_close, (MPI_File *fh))
XM_API_(int, File_delete, (const char *filename, MPI_Info info))
XM_API_(int, File_set_size, (MPI_File fh, MPI_Offset size))
XM_API_(int, File_preallocate, (MPI_File fh, MPI_Offset size))
XM_API_(int, File_get_size, (MPI_File fh, MPI_Offset *size))
XM_API_(int, File_get_group, (MPI_File fh, MPI_Group *group))
XM_API_(int, File_get_amode, (MPI_File fh, int *amode))
XM_API_(int, File_set_info, (MPI_File fh, MPI_Info info))
XM_API_(int, File_get_info, (MPI_File fh, MPI_Info *info_used))
XM_API_(int, File_set_view, (MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                             MPI_Datatype filetype, const char *datarep, MPI_Info info))
XM_API_(int, File_get_view, (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype,
                             MPI_Datatype *filetype, char *datarep))
XM_API_(int, File_read_at, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                            MPI_Datatype dt, MPI_Status *status))
XM_API_(int, File_read_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                MPI_Datatype dt, MPI_Status *status))
XM_API_(int, File_write_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                             MPI_Datatype dt, MPI_Status *status))
XM_API_(int, File_write_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                 MPI_Datatype dt, MPI_Status *status))
XM_API_(int, File_iread_at, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                             MPI_Datatype dt, MPI_Request *req))
XM_API_(int, File_iwrite_at, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                              MPI_Datatype dt, MPI_Request *req))
XM_API_(int, File_iread_at_all, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                 MPI_Datatype dt, MPI_Request *req))
XM_API_(int, File_iwrite_at_all, (MPI_File fh, MPI_Offset offset, const void *buf, int count,
                                  MPI_Datatype dt, MPI_Request *req))
XM_API_(int, File_read, (MPI_File fh, void *buf, int count, MPI_Datatype dt,
                         MPI_Status *status))
XM_API_(int, File_read_all, (MPI_File fh, void *buf, int count, MPI_Datatype dt,
                             MPI_Status *status))
XM_API_(int, File_write, (MPI_File fh, const void *buf, int count, MPI_Datatype dt,
                          MPI_Status *status))
XM_API_(int, File_write_all, (MPI_File fh, const void *buf, int count, MPI_Datatype dt,
                              MPI_Status *status))
XM_API_(int, File_iread, (MPI_File fh, void *buf, int count, MPI_Datatype dt,
                          MPI_Request *req))
XM_API_(int, File_iwrite, (MPI_File fh, const void *buf, int count, MPI_Datatype dt,
                           MPI_Request *req))
XM_API_(int, File_iread_all, (MPI_File fh, void *buf, int count, MPI_Datatype dt,
                              MPI_Request *req))
XM_API_(int, File_iwrite_all, (MPI_File fh, const void *buf, int count, MPI_Datatype dt,
                               MPI_Request *req))
XM_API_(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence))
XM_API_(int, File_get_position, (MPI_File fh, MPI_Offset *offset))
XM_API_(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp))
XM_API_(int, File_read_shared, (MPI_File fh, void *buf, int count, MPI_Datatype dt,
                                MPI_Status *status))
XM_API_(int, File_write_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype dt,
                                 MPI_Status *status))
XM_API_(int, File_iread_shared, (MPI_File fh, void *buf, int count, MPI_Datatype dt,
                                 MPI_Request *req))
XM_API_(int, File_iwrite_shared, (MPI_File fh, const void *buf, int count, MPI_Datatype dt,
                                  MPI_Request *req))
XM_API_(int, File_read_ordered, (MPI_File fh, void *buf, int count, MPI_Datatype dt,
                                 MPI_Status *status))
XM_API_(int, File_write_ordered, (MPI_File fh, const void *buf, int count, MPI_Datatype dt,
                                  MPI_Status *status))
XM_API_(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence))
XM_API_(int, File_get_position_shared, (MPI_File fh, MPI_Offset *offset))
XM_API_(int, File_read_at_all_begin, (MPI_File fh, MPI_Offset offset, void *buf, int count,
                                      MPI_Datatype dt))
XM_API_(int, File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status))
XM_API_(int, File_write_at_all_begin, (MPI_File fh, MPI_Offset offset, const void *buf,
                                       int count, MPI_Datatype dt))
XM_API_(int, File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
XM_API_(int, File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype dt))
XM_API_(int, File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status))
XM_API_(int, File_write_all_begin, (MPI_File fh, const void *buf, int count,
                                    MPI_Datatype dt))
XM_API_(int, File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status))
XM_API_(int, File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype dt))
XM_API_(int, File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status))
XM_API_(int, File_write_ordered_begin, (MPI_File fh, const void *buf, int count,
                                        MPI_Datatype dt))
XM_API_(int, File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status))
XM_API_(int, File_get_type_extent, (MPI_File fh, MPI_Datatype dt, MPI_Aint *extent))
XM_API_(int, File_set_atomicity, (MPI_File fh, int flag))
XM_API_(int, File_get_atomicity, (MPI_File fh, int *flag))
XM_API_(int, File_sync, (MPI_File fh))
XM_API_(int, File_create_errhandler, (MPI_File_errhandler_function *fn, MPI_Errhandler *eh))
XM_API_(int, File_set_errhandler, (MPI_File fh, MPI_Errhandler eh))
XM_API_(int, File_get_errhandler, (MPI_File fh, MPI_Errhandler *eh))
XM_API_(int, File_call_errhandler, (MPI_File fh, int errorcode))
XM_API_(MPI_Fint, File_c2f, (MPI_File fh))
XM_API_(MPI_File, File_f2c, (MPI_Fint fh))
XM_API_(int, Register_datarep, (const char *datarep,
                                MPI_Datarep_conversion_function *read_conversion_fn,
                                MPI_Datarep_conversion_function *write_conversion_fn,
                                MPI_Datarep_extent_function *dtype_file_extent_fn,
                                void *extra_state))
/* ---- end MPI-IO -------------------------------------------------------------------- */
/* ---- p2p engine (issue 21): MPI-4 nonblocking sendrecv, Comm_idup_with_info ---- */
XM_API_(int, Isendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest,
                         int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                         int source, int recvtag, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Isendrecv_replace, (void *buf, int count, MPI_Datatype dt, int dest, int sendtag,
                                 int source, int recvtag, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Comm_idup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm,
                                   MPI_Request *req))


/* ---- intercommunicators, process topologies, neighbor collectives ---- */
XM_API_(int, Intercomm_create, (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                                int remote_leader, int tag, MPI_Comm *newintercomm))
XM_API_(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm))
XM_API_(int, Dims_create, (int nnodes, int ndims, int dims[]))
XM_API_(int, Cart_create, (MPI_Comm comm, int ndims, const int dims[], const int periods[],
                           int reorder, MPI_Comm *comm_cart))
XM_API_(int, Cartdim_get, (MPI_Comm comm, int *ndims))
XM_API_(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]))
XM_API_(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank))
XM_API_(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]))
XM_API_(int, Cart_shift, (MPI_Comm comm, int direction, int disp, int *rank_source,
                          int *rank_dest))
XM_API_(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm))
XM_API_(int, Cart_map, (MPI_Comm comm, int ndims, const int dims[], const int periods[],
                        int *newrank))
XM_API_(int, Graph_create, (MPI_Comm comm, int nnodes, const int index[], const int edges[],
                            int reorder, MPI_Comm *comm_graph))
XM_API_(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges))
XM_API_(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]))
XM_API_(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors))
XM_API_(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]))
XM_API_(int, Graph_map, (MPI_Comm comm, int nnodes, const int index[], const int edges[],
                         int *newrank))
XM_API_(int, Dist_graph_create_adjacent, (MPI_Comm comm, int indegree, const int sources[],
                                          const int sourceweights[], int outdegree,
                                          const int destinations[], const int destweights[],
                                          MPI_Info info, int reorder, MPI_Comm *comm_dist_graph))
XM_API_(int, Dist_graph_create, (MPI_Comm comm, int n, const int sources[], const int degrees[],
                                 const int destinations[], const int weights[], MPI_Info info,
                                 int reorder, MPI_Comm *comm_dist_graph))
XM_API_(int, Dist_graph_neighbors_count, (MPI_Comm comm, int *indegree, int *outdegree,
                                          int *weighted))
XM_API_(int, Dist_graph_neighbors, (MPI_Comm comm, int maxindegree, int sources[],
                                    int sourceweights[], int maxoutdegree, int destinations[],
                                    int destweights[]))
XM_API_(int, Neighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm))
XM_API_(int, Neighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, const int recvcounts[], const int displs[],
                                   MPI_Datatype recvtype, MPI_Comm comm))
XM_API_(int, Neighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm))
XM_API_(int, Neighbor_alltoallv, (const void *sendbuf, const int sendcounts[],
                                  const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                  const int recvcounts[], const int rdispls[],
                                  MPI_Datatype recvtype, MPI_Comm comm))
XM_API_(int, Neighbor_alltoallw, (const void *sendbuf, const int sendcounts[],
                                  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                  void *recvbuf, const int recvcounts[],
                                  const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                  MPI_Comm comm))
XM_API_(int, Ineighbor_allgather, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ineighbor_allgatherv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ineighbor_alltoall, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ineighbor_alltoallv, (const void *sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ineighbor_alltoallw, (const void *sendbuf, const int sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const int recvcounts[],
                                   const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                   MPI_Comm comm, MPI_Request *req))
XM_API_(int, Ialltoallw, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                          const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                          MPI_Request *req))
/* MPI-4 persistent collectives and persistent neighbor collectives */
XM_API_(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request *req))
XM_API_(int, Bcast_init, (void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                          MPI_Info info, MPI_Request *req))
XM_API_(int, Reduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                           MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
                           MPI_Request *req))
XM_API_(int, Allreduce_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                              MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req))
XM_API_(int, Gather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                           MPI_Comm comm, MPI_Info info, MPI_Request *req))
XM_API_(int, Scatter_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Info info, MPI_Request *req))
XM_API_(int, Allgather_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype,
                              MPI_Comm comm, MPI_Info info, MPI_Request *req))
XM_API_(int, Alltoall_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype,
                             MPI_Comm comm, MPI_Info info, MPI_Request *req))
XM_API_(int, Reduce_scatter_block_init, (const void *sendbuf, void *recvbuf, int recvcount,
                                         MPI_Datatype dt, MPI_Op op, MPI_Comm comm,
                                         MPI_Info info, MPI_Request *req))
XM_API_(int, Scan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                         MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req))
XM_API_(int, Exscan_init, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype dt,
                           MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *req))
XM_API_(int, Gatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                            MPI_Request *req))
XM_API_(int, Scatterv_init, (const void *sendbuf, const int sendcounts[], const int displs[],
                             MPI_Datatype sendtype, void *recvbuf, int recvcount,
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,
                             MPI_Request *req))
XM_API_(int, Allgatherv_init, (const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const int recvcounts[], const int displs[],
                               MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                               MPI_Request *req))
XM_API_(int, Alltoallv_init, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                              MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                              const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Info info, MPI_Request *req))
XM_API_(int, Alltoallw_init, (const void *sendbuf, const int sendcounts[], const int sdispls[],
                              const MPI_Datatype sendtypes[], void *recvbuf,
                              const int recvcounts[], const int rdispls[],
                              const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                              MPI_Request *req))
XM_API_(int, Reduce_scatter_init, (const void *sendbuf, void *recvbuf, const int recvcounts[],
                                   MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *req))
XM_API_(int, Neighbor_allgather_init, (const void *sendbuf, int sendcount,
                                       MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                       MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                       MPI_Request *req))
XM_API_(int, Neighbor_allgatherv_init, (const void *sendbuf, int sendcount,
                                        MPI_Datatype sendtype, void *recvbuf,
                                        const int recvcounts[], const int displs[],
                                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *req))
XM_API_(int, Neighbor_alltoall_init, (const void *sendbuf, int sendcount,
                                      MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                      MPI_Request *req))
XM_API_(int, Neighbor_alltoallv_init, (const void *sendbuf, const int sendcounts[],
                                       const int sdispls[], MPI_Datatype sendtype,
                                       void *recvbuf, const int recvcounts[],
                                       const int rdispls[], MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Info info, MPI_Request *req))
XM_API_(int, Neighbor_alltoallw_init, (const void *sendbuf, const int sendcounts[],
                                       const MPI_Aint sdispls[],
                                       const MPI_Datatype sendtypes[], void *recvbuf,
                                       const int recvcounts[], const MPI_Aint rdispls[],
                                       const MPI_Datatype recvtypes[], MPI_Comm comm,
                                       MPI_Info info, MPI_Request *req))
/* ---- one-sided communication (MPI-3.1 chapter 11; mpi/rma/) ------------- */
#define MPI_WIN_BASE          0x49000011
#define MPI_WIN_SIZE          0x49000012
#define MPI_WIN_DISP_UNIT     0x49000013
#define MPI_WIN_CREATE_FLAVOR 0x49000014
#define MPI_WIN_MODEL         0x49000015
#define MPI_WIN_FLAVOR_CREATE   1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC  3
#define MPI_WIN_FLAVOR_SHARED   4
#define MPI_WIN_SEPARATE 1
#define MPI_WIN_UNIFIED  2
#define MPI_LOCK_EXCLUSIVE 234
#define MPI_LOCK_SHARED    235
#define MPI_MODE_NOCHECK    1024
#define MPI_MODE_NOSTORE    2048
#define MPI_MODE_NOPUT      4096
#define MPI_MODE_NOPRECEDE  8192
#define MPI_MODE_NOSUCCEED 16384
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *err, ...);
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
XM_API_(int, Win_create, (void *base, MPI_Aint size, int disp_unit, MPI_Info info,
                          MPI_Comm comm, MPI_Win *win))
XM_API_(int, Win_allocate, (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                            void *baseptr, MPI_Win *win))
XM_API_(int, Win_allocate_shared, (MPI_Aint size, int disp_unit, MPI_Info info,
                                   MPI_Comm comm, void *baseptr, MPI_Win *win))
XM_API_(int, Win_shared_query, (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit,
                                void *baseptr))
XM_API_(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win))
XM_API_(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size))
XM_API_(int, Win_detach, (MPI_Win win, const void *base))
XM_API_(int, Win_free, (MPI_Win *win))
XM_API_(int, Win_get_group, (MPI_Win win, MPI_Group *group))
XM_API_(int, Win_set_info, (MPI_Win win, MPI_Info info))
XM_API_(int, Win_get_info, (MPI_Win win, MPI_Info *info_used))
XM_API_(int, Win_get_attr, (MPI_Win win, int keyval, void *attr_val, int *flag))
XM_API_(int, Win_set_name, (MPI_Win win, const char *name))
XM_API_(int, Win_get_name, (MPI_Win win, char *name, int *resultlen))
XM_API_(int, Win_create_errhandler, (MPI_Win_errhandler_function *fn,
                                     MPI_Errhandler *errhandler))
XM_API_(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler))
XM_API_(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler))
XM_API_(int, Win_call_errhandler, (MPI_Win win, int errorcode))
XM_API_(int, Put, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Win win))
XM_API_(int, Get, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                   int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_datatype, MPI_Win win))
XM_API_(int, Accumulate, (const void *origin_addr, int origin_count,
                          MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                          int target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win))
XM_API_(int, Get_accumulate, (const void *origin_addr, int origin_count,
                              MPI_Datatype origin_datatype, void *result_addr,
                              int result_count, MPI_Datatype result_datatype, int target_rank,
                              MPI_Aint target_disp, int target_count,
                              MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
XM_API_(int, Fetch_and_op, (const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                            int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win))
XM_API_(int, Compare_and_swap, (const void *origin_addr, const void *compare_addr,
                                void *result_addr, MPI_Datatype datatype, int target_rank,
                                MPI_Aint target_disp, MPI_Win win))
XM_API_(int, Rput, (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
XM_API_(int, Rget, (void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request))
XM_API_(int, Raccumulate, (const void *origin_addr, int origin_count,
                           MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                           int target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request))
XM_API_(int, Rget_accumulate, (const void *origin_addr, int origin_count,
                               MPI_Datatype origin_datatype, void *result_addr,
                               int result_count, MPI_Datatype result_datatype,
                               int target_rank, MPI_Aint target_disp, int target_count,
                               MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                               MPI_Request *request))
XM_API_(int, Win_fence, (int assert, MPI_Win win))
XM_API_(int, Win_post, (MPI_Group group, int assert, MPI_Win win))
XM_API_(int, Win_start, (MPI_Group group, int assert, MPI_Win win))
XM_API_(int, Win_complete, (MPI_Win win))
XM_API_(int, Win_wait, (MPI_Win win))
XM_API_(int, Win_test, (MPI_Win win, int *flag))
XM_API_(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win))
XM_API_(int, Win_unlock, (int rank, MPI_Win win))
XM_API_(int, Win_lock_all, (int assert, MPI_Win win))
XM_API_(int, Win_unlock_all, (MPI_Win win))
XM_API_(int, Win_flush, (int rank, MPI_Win win))
XM_API_(int, Win_flush_all, (MPI_Win win))
XM_API_(int, Win_flush_local, (int rank, MPI_Win win))
XM_API_(int, Win_flush_local_all, (MPI_Win win))
XM_API_(int, Win_sync, (MPI_Win win))
XM_API_(MPI_Fint, Win_c2f, (MPI_Win win))
XM_API_(MPI_Win, Win_f2c, (MPI_Fint win))
/* ---- end of one-sided communication ------------------------------------------------ */
/* ---- (issue 21) error classes, handle
 * conversion, generalized requests, Info_get_string, Fortran 90 types, MPI_T ---- */
XM_API_(int, Add_error_class, (int *errorclass))
XM_API_(int, Add_error_code, (int errorclass, int *errorcode))
XM_API_(int, Add_error_string, (int errorcode, const char *string))
/* (Info/Errhandler/Message/Status c2f and f2c: the Fortran interoperability block) */
XM_API_(int, Grequest_start, (MPI_Grequest_query_function *query_fn,
                              MPI_Grequest_free_function *free_fn,
                              MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                              MPI_Request *req))
XM_API_(int, Grequest_complete, (MPI_Request req))
XM_API_(int, Info_get_string, (MPI_Info info, const char *key, int *buflen, char *value,
                               int *flag))
XM_API_(int, Type_create_f90_real, (int p, int r, MPI_Datatype *newtype))
XM_API_(int, Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype))
XM_API_(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype))
XM_API_(int, T_init_thread, (int required, int *provided))
XM_API_(int, T_finalize, (void))
XM_API_(int, T_enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len))
XM_API_(int, T_enum_get_item, (MPI_T_enum enumtype, int index, int *value, char *name,
                               int *name_len))
XM_API_(int, T_cvar_get_num, (int *num_cvar))
XM_API_(int, T_cvar_get_info, (int cvar_index, char *name, int *name_len, int *verbosity,
                               MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc,
                               int *desc_len, int *bind, int *scope))
XM_API_(int, T_cvar_get_index, (const char *name, int *cvar_index))
XM_API_(int, T_cvar_handle_alloc, (int cvar_index, void *obj_handle,
                                   MPI_T_cvar_handle *handle, int *count))
XM_API_(int, T_cvar_handle_free, (MPI_T_cvar_handle *handle))
XM_API_(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf))
XM_API_(int, T_cvar_write, (MPI_T_cvar_handle handle, const void *buf))
XM_API_(int, T_pvar_get_num, (int *num_pvar))
XM_API_(int, T_pvar_get_info, (int pvar_index, char *name, int *name_len, int *verbosity,
                               int *var_class, MPI_Datatype *datatype, MPI_T_enum *enumtype,
                               char *desc, int *desc_len, int *bind, int *readonly,
                               int *continuous, int *atomic))
XM_API_(int, T_pvar_get_index, (const char *name, int var_class, int *pvar_index))
XM_API_(int, T_pvar_session_create, (MPI_T_pvar_session *session))
XM_API_(int, T_pvar_session_free, (MPI_T_pvar_session *session))
XM_API_(int, T_pvar_handle_alloc, (MPI_T_pvar_session session, int pvar_index,
                                   void *obj_handle, MPI_T_pvar_handle *handle, int *count))
XM_API_(int, T_pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle))
XM_API_(int, T_pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
XM_API_(int, T_pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
XM_API_(int, T_pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf))
XM_API_(int, T_pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                            const void *buf))
XM_API_(int, T_pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle))
XM_API_(int, T_pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                                void *buf))
XM_API_(int, T_category_get_num, (int *num_cat))
XM_API_(int, T_category_get_info, (int cat_index, char *name, int *name_len, char *desc,
                                   int *desc_len, int *num_cvars, int *num_pvars,
                                   int *num_categories))
XM_API_(int, T_category_get_index, (const char *name, int *cat_index))
XM_API_(int, T_category_get_cvars, (int cat_index, int len, int indices[]))
XM_API_(int, T_category_get_pvars, (int cat_index, int len, int indices[]))
XM_API_(int, T_category_get_categories, (int cat_index, int len, int indices[]))
XM_API_(int, T_category_changed, (int *stamp))

/* ---- Fortran interoperability (api/fint.c, bindings/, mpi/README.md) ----
 * The sized Fortran datatypes are the C datatypes of the same size and kind (the same
 * handle: MPI_Type_get_name gives the C name).  MPI_F_STATUS_IGNORE and
 * MPI_F_STATUSES_IGNORE are the addresses of Fortran's MPI_STATUS_IGNORE and
 * MPI_STATUSES_IGNORE: common blocks whose storage libmpi owns (api/fint.c). */
#ifndef MPI_INTEGER1 /* (unless mpi.h defines them as types of their own above) */
#define MPI_INTEGER1          MPI_INT8_T
#define MPI_INTEGER2          MPI_INT16_T
#define MPI_INTEGER4          MPI_INTEGER
#define MPI_INTEGER8          MPI_INT64_T
#define MPI_REAL4             MPI_REAL
#define MPI_REAL8             MPI_DOUBLE_PRECISION
#define MPI_COMPLEX8          MPI_COMPLEX
#define MPI_COMPLEX16         MPI_DOUBLE_COMPLEX
#endif
#ifndef MPI_F_STATUS_SIZE
#define MPI_F_STATUS_SIZE     ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#define MPI_F_SOURCE          ((int)(offsetof(MPI_Status, MPI_SOURCE) / sizeof(MPI_Fint)))
#define MPI_F_TAG             ((int)(offsetof(MPI_Status, MPI_TAG) / sizeof(MPI_Fint)))
#define MPI_F_ERROR           ((int)(offsetof(MPI_Status, MPI_ERROR) / sizeof(MPI_Fint)))
#endif
extern MPI_Fint mpipriv_status_ignore_[];
extern MPI_Fint mpipriv_statuses_ignore_[];
#define MPI_F_STATUS_IGNORE   (&mpipriv_status_ignore_[0])
#define MPI_F_STATUSES_IGNORE (&mpipriv_statuses_ignore_[0])
XM_API_(int, Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status))
XM_API_(int, Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status))
XM_API_(MPI_Fint, Info_c2f, (MPI_Info info))
XM_API_(MPI_Info, Info_f2c, (MPI_Fint info))
XM_API_(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler))
XM_API_(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler))
XM_API_(MPI_Fint, Message_c2f, (MPI_Message message))
XM_API_(MPI_Message, Message_f2c, (MPI_Fint message))

/* ---- MPI-4.0 large-count bindings (MPI-4.0 §2.5.8 and the chapters' _c forms) ----
 * The same operations with MPI_Count counts and MPI_Aint displacements.  Defined in
 * api/largecount.c, generated by gen_largecount.py from these declarations and the
 * int forms above; mpi/README.md, "Large counts", says what takes counts above
 * INT_MAX. */
typedef void MPI_User_function_c(void *invec, void *inoutvec, MPI_Count *len,
                                 MPI_Datatype *dt);

XM_API_(int, Accumulate_c, (const void *origin_addr, MPI_Count origin_count,
        MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
        MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
XM_API_(int, Allgather_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm))
XM_API_(int, Allgather_init_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Info info, MPI_Request *request))
XM_API_(int, Allgatherv_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
        const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm))
XM_API_(int, Allgatherv_init_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
        const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
        MPI_Request *request))
XM_API_(int, Allreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
XM_API_(int, Allreduce_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
        MPI_Request *request))
XM_API_(int, Alltoall_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm))
XM_API_(int, Alltoall_init_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Info info, MPI_Request *request))
XM_API_(int, Alltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
        MPI_Comm comm))
XM_API_(int, Alltoallv_init_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Info info, MPI_Request *request))
XM_API_(int, Alltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
        const MPI_Datatype recvtypes[], MPI_Comm comm))
XM_API_(int, Alltoallw_init_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
        MPI_Request *request))
XM_API_(int, Bcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
        MPI_Comm comm))
XM_API_(int, Bcast_init_c, (void *buffer, MPI_Count count, MPI_Datatype datatype,
        int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
XM_API_(int, Bsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
        int tag, MPI_Comm comm))
XM_API_(int, Bsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
        int dest, int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Buffer_attach_c, (void *buffer, MPI_Count size))
XM_API_(int, Buffer_detach_c, (void *buffer_addr, MPI_Count *size))
XM_API_(int, Exscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
XM_API_(int, Exscan_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
        MPI_Request *request))
XM_API_(int, Gather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
        MPI_Comm comm))
XM_API_(int, Gather_init_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
XM_API_(int, Gatherv_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
        MPI_Datatype recvtype, int root, MPI_Comm comm))
XM_API_(int, Gatherv_init_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
        const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
        MPI_Info info, MPI_Request *request))
XM_API_(int, Get_c, (void *origin_addr, MPI_Count origin_count,
        MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
        MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win))
XM_API_(int, Get_accumulate_c, (const void *origin_addr, MPI_Count origin_count,
        MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
        MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
        MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win))
XM_API_(int, Get_count_c, (const MPI_Status *status, MPI_Datatype datatype,
        MPI_Count *count))
XM_API_(int, Get_elements_c, (const MPI_Status *status, MPI_Datatype datatype,
        MPI_Count *count))
XM_API_(int, Iallgather_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Request *request))
XM_API_(int, Iallgatherv_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
        const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
        MPI_Request *request))
XM_API_(int, Iallreduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Ialltoall_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Request *request))
XM_API_(int, Ialltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Request *request))
XM_API_(int, Ialltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
XM_API_(int, Ibcast_c, (void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
        MPI_Comm comm, MPI_Request *request))
XM_API_(int, Ibsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
        int dest, int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Iexscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Igather_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
        MPI_Comm comm, MPI_Request *request))
XM_API_(int, Igatherv_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
        const MPI_Aint displs[], MPI_Datatype recvtype, int root, MPI_Comm comm,
        MPI_Request *request))
XM_API_(int, Imrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype,
        MPI_Message *message, MPI_Request *request))
XM_API_(int, Ineighbor_allgather_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Request *request))
XM_API_(int, Ineighbor_allgatherv_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
        const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
        MPI_Request *request))
XM_API_(int, Ineighbor_alltoall_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Request *request))
XM_API_(int, Ineighbor_alltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Request *request))
XM_API_(int, Ineighbor_alltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
        const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request))
XM_API_(int, Irecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source,
        int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Ireduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
        MPI_Request *request))
XM_API_(int, Ireduce_scatter_c, (const void *sendbuf, void *recvbuf,
        const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
        MPI_Request *request))
XM_API_(int, Ireduce_scatter_block_c, (const void *sendbuf, void *recvbuf,
        MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
        MPI_Request *request))
XM_API_(int, Irsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
        int dest, int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Iscan_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Iscatter_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        int root, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Iscatterv_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
        MPI_Request *request))
XM_API_(int, Isend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
        int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Isendrecv_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
        MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
        MPI_Request *request))
XM_API_(int, Isendrecv_replace_c, (void *buf, MPI_Count count, MPI_Datatype datatype,
        int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
        MPI_Request *request))
XM_API_(int, Issend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
        int dest, int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Mrecv_c, (void *buf, MPI_Count count, MPI_Datatype datatype,
        MPI_Message *message, MPI_Status *status))
XM_API_(int, Neighbor_allgather_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm))
XM_API_(int, Neighbor_allgather_init_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Info info, MPI_Request *request))
XM_API_(int, Neighbor_allgatherv_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
        const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm))
XM_API_(int, Neighbor_allgatherv_init_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, const MPI_Count recvcounts[],
        const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
        MPI_Request *request))
XM_API_(int, Neighbor_alltoall_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm))
XM_API_(int, Neighbor_alltoall_init_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        MPI_Comm comm, MPI_Info info, MPI_Request *request))
XM_API_(int, Neighbor_alltoallv_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[], MPI_Datatype recvtype,
        MPI_Comm comm))
XM_API_(int, Neighbor_alltoallv_init_c, (const void *sendbuf,
        const MPI_Count sendcounts[], const MPI_Aint sdispls[], MPI_Datatype sendtype,
        void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request))
XM_API_(int, Neighbor_alltoallw_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf,
        const MPI_Count recvcounts[], const MPI_Aint rdispls[],
        const MPI_Datatype recvtypes[], MPI_Comm comm))
XM_API_(int, Neighbor_alltoallw_init_c, (const void *sendbuf,
        const MPI_Count sendcounts[], const MPI_Aint sdispls[],
        const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
        MPI_Info info, MPI_Request *request))
XM_API_(int, Op_create_c, (MPI_User_function_c *user_fn, int commute, MPI_Op *op))
XM_API_(int, Pack_c, (const void *inbuf, MPI_Count incount, MPI_Datatype datatype,
        void *outbuf, MPI_Count outsize, MPI_Count *position, MPI_Comm comm))
XM_API_(int, Pack_external_c, (const char *datarep, const void *inbuf, MPI_Count incount,
        MPI_Datatype datatype, void *outbuf, MPI_Count outsize, MPI_Count *position))
XM_API_(int, Pack_external_size_c, (const char *datarep, MPI_Count incount,
        MPI_Datatype datatype, MPI_Count *size))
XM_API_(int, Pack_size_c, (MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm,
        MPI_Count *size))
XM_API_(int, Put_c, (const void *origin_addr, MPI_Count origin_count,
        MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
        MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win))
XM_API_(int, Raccumulate_c, (const void *origin_addr, MPI_Count origin_count,
        MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
        MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
        MPI_Request *request))
XM_API_(int, Recv_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source,
        int tag, MPI_Comm comm, MPI_Status *status))
XM_API_(int, Recv_init_c, (void *buf, MPI_Count count, MPI_Datatype datatype, int source,
        int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Reduce_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm))
XM_API_(int, Reduce_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Info info,
        MPI_Request *request))
XM_API_(int, Reduce_local_c, (const void *inbuf, void *inoutbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op))
XM_API_(int, Reduce_scatter_c, (const void *sendbuf, void *recvbuf,
        const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
XM_API_(int, Reduce_scatter_block_c, (const void *sendbuf, void *recvbuf,
        MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
XM_API_(int, Reduce_scatter_block_init_c, (const void *sendbuf, void *recvbuf,
        MPI_Count recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
        MPI_Info info, MPI_Request *request))
XM_API_(int, Reduce_scatter_init_c, (const void *sendbuf, void *recvbuf,
        const MPI_Count recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
        MPI_Info info, MPI_Request *request))
XM_API_(int, Rget_c, (void *origin_addr, MPI_Count origin_count,
        MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
        MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
        MPI_Request *request))
XM_API_(int, Rget_accumulate_c, (const void *origin_addr, MPI_Count origin_count,
        MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
        MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
        MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
        MPI_Request *request))
XM_API_(int, Rput_c, (const void *origin_addr, MPI_Count origin_count,
        MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
        MPI_Count target_count, MPI_Datatype target_datatype, MPI_Win win,
        MPI_Request *request))
XM_API_(int, Rsend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
        int tag, MPI_Comm comm))
XM_API_(int, Rsend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
        int dest, int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Scan_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm))
XM_API_(int, Scan_init_c, (const void *sendbuf, void *recvbuf, MPI_Count count,
        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
        MPI_Request *request))
XM_API_(int, Scatter_c, (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
        void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
        MPI_Comm comm))
XM_API_(int, Scatter_init_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
        int root, MPI_Comm comm, MPI_Info info, MPI_Request *request))
XM_API_(int, Scatterv_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm))
XM_API_(int, Scatterv_init_c, (const void *sendbuf, const MPI_Count sendcounts[],
        const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
        MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
        MPI_Info info, MPI_Request *request))
XM_API_(int, Send_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
        int tag, MPI_Comm comm))
XM_API_(int, Send_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
        int dest, int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Sendrecv_c, (const void *sendbuf, MPI_Count sendcount,
        MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
        MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm,
        MPI_Status *status))
XM_API_(int, Sendrecv_replace_c, (void *buf, MPI_Count count, MPI_Datatype datatype,
        int dest, int sendtag, int source, int recvtag, MPI_Comm comm,
        MPI_Status *status))
XM_API_(int, Ssend_c, (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
        int tag, MPI_Comm comm))
XM_API_(int, Ssend_init_c, (const void *buf, MPI_Count count, MPI_Datatype datatype,
        int dest, int tag, MPI_Comm comm, MPI_Request *request))
XM_API_(int, Type_contiguous_c, (MPI_Count count, MPI_Datatype oldtype,
        MPI_Datatype *newtype))
XM_API_(int, Type_create_darray_c, (int size, int rank, int ndims,
        const MPI_Count array_of_gsizes[], const int array_of_distribs[],
        const int array_of_dargs[], const int array_of_psizes[], int order,
        MPI_Datatype oldtype, MPI_Datatype *newtype))
XM_API_(int, Type_create_hindexed_c, (MPI_Count count,
        const MPI_Count array_of_blocklengths[],
        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
        MPI_Datatype *newtype))
XM_API_(int, Type_create_hindexed_block_c, (MPI_Count count, MPI_Count blocklength,
        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
        MPI_Datatype *newtype))
XM_API_(int, Type_create_hvector_c, (MPI_Count count, MPI_Count blocklength,
        MPI_Count stride, MPI_Datatype oldtype, MPI_Datatype *newtype))
XM_API_(int, Type_create_indexed_block_c, (MPI_Count count, MPI_Count blocklength,
        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
        MPI_Datatype *newtype))
XM_API_(int, Type_create_resized_c, (MPI_Datatype oldtype, MPI_Count lb,
        MPI_Count extent, MPI_Datatype *newtype))
XM_API_(int, Type_create_struct_c, (MPI_Count count,
        const MPI_Count array_of_blocklengths[],
        const MPI_Count array_of_displacements[], const MPI_Datatype array_of_types[],
        MPI_Datatype *newtype))
XM_API_(int, Type_create_subarray_c, (int ndims, const MPI_Count array_of_sizes[],
        const MPI_Count array_of_subsizes[], const MPI_Count array_of_starts[],
        int order, MPI_Datatype oldtype, MPI_Datatype *newtype))
XM_API_(int, Type_get_contents_c, (MPI_Datatype datatype, MPI_Count max_integers,
        MPI_Count max_addresses, MPI_Count max_large_counts, MPI_Count max_datatypes,
        int array_of_integers[], MPI_Aint array_of_addresses[],
        MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[]))
XM_API_(int, Type_get_envelope_c, (MPI_Datatype datatype, MPI_Count *num_integers,
        MPI_Count *num_addresses, MPI_Count *num_large_counts, MPI_Count *num_datatypes,
        int *combiner))
XM_API_(int, Type_get_extent_c, (MPI_Datatype datatype, MPI_Count *lb,
        MPI_Count *extent))
XM_API_(int, Type_get_true_extent_c, (MPI_Datatype datatype, MPI_Count *true_lb,
        MPI_Count *true_extent))
XM_API_(int, Type_indexed_c, (MPI_Count count, const MPI_Count array_of_blocklengths[],
        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
        MPI_Datatype *newtype))
XM_API_(int, Type_size_c, (MPI_Datatype datatype, MPI_Count *size))
XM_API_(int, Type_vector_c, (MPI_Count count, MPI_Count blocklength, MPI_Count stride,
        MPI_Datatype oldtype, MPI_Datatype *newtype))
XM_API_(int, Unpack_c, (const void *inbuf, MPI_Count insize, MPI_Count *position,
        void *outbuf, MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm))
XM_API_(int, Unpack_external_c, (const char datarep[], const void *inbuf,
        MPI_Count insize, MPI_Count *position, void *outbuf, MPI_Count outcount,
        MPI_Datatype datatype))
XM_API_(int, Win_allocate_c, (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
        MPI_Comm comm, void *baseptr, MPI_Win *win))
XM_API_(int, Win_allocate_shared_c, (MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
        MPI_Comm comm, void *baseptr, MPI_Win *win))
XM_API_(int, Win_create_c, (void *base, MPI_Aint size, MPI_Aint disp_unit, MPI_Info info,
        MPI_Comm comm, MPI_Win *win))
XM_API_(int, Win_shared_query_c, (MPI_Win win, int rank, MPI_Aint *size,
        MPI_Aint *disp_unit, void *baseptr))

/* ---- dynamic processes (api/dynproc.c, mpi/README.md) ----
 * Ports, accept/connect, join and the name service work between processes of one job;
 * a port of another job is MPI_ERR_PORT and Comm_spawn(_multiple) MPI_ERR_SPAWN. */
XM_API_(int, Open_port, (MPI_Info info, char *port_name))
XM_API_(int, Close_port, (const char *port_name))
XM_API_(int, Comm_accept, (const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                           MPI_Comm *newcomm))
XM_API_(int, Comm_connect, (const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                            MPI_Comm *newcomm))
XM_API_(int, Comm_disconnect, (MPI_Comm *comm))
XM_API_(int, Comm_join, (int fd, MPI_Comm *intercomm))
XM_API_(int, Publish_name, (const char *service_name, MPI_Info info, const char *port_name))
XM_API_(int, Unpublish_name, (const char *service_name, MPI_Info info,
                              const char *port_name))
XM_API_(int, Lookup_name, (const char *service_name, MPI_Info info, char *port_name))
XM_API_(int, Comm_spawn, (const char *command, char *argv[], int maxprocs, MPI_Info info,
                          int root, MPI_Comm comm, MPI_Comm *intercomm,
                          int array_of_errcodes[]))
XM_API_(int, Comm_spawn_multiple, (int count, char *array_of_commands[],
                                   char **array_of_argv[], const int array_of_maxprocs[],
                                   const MPI_Info array_of_info[], int root, MPI_Comm comm,
                                   MPI_Comm *intercomm, int array_of_errcodes[]))
XM_API_(int, Comm_get_parent, (MPI_Comm *parent))
/* ---- MPICH-suite fixes (issue 21): window keyvals and attributes
 * (api/winattr.c; MPI-3.1 6.7.3).  Windows are never duplicated: the copy callback is
 * kept and never called. */
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state,
                                       void *attribute_val_in, void *attribute_val_out,
                                       int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val,
                                         void *extra_state);
#define MPI_WIN_NULL_COPY_FN   ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_DUP_FN         ((MPI_Win_copy_attr_function *)1)
#define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)
XM_API_(int, Win_create_keyval, (MPI_Win_copy_attr_function *win_copy_attr_fn,
                                 MPI_Win_delete_attr_function *win_delete_attr_fn,
                                 int *win_keyval, void *extra_state))
XM_API_(int, Win_free_keyval, (int *win_keyval))
XM_API_(int, Win_set_attr, (MPI_Win win, int win_keyval, void *attr_val))
XM_API_(int, Win_delete_attr, (MPI_Win win, int win_keyval))
/* ---- end of the MPICH-suite fixes --------------------------------------------------- */
/* ---- (issue 22) Fortran info and generalized requests: MPI-4.0 Info_create_env
 * (api/info.c) ---- */
XM_API_(int, Info_create_env, (int argc, char *argv[], MPI_Info *info))
/* ---- end of Fortran info ------------------------------------------------------------ */
/* ---- C API correctness gaps (issue 21, mpifix): MPI-4.0 hardware split types of
 * MPI_Comm_split_type (info key "mpi_hw_resource_type"; api/comm.c, core/hwsplit.c) */
#define MPI_COMM_TYPE_HW_UNGUIDED 2
#define MPI_COMM_TYPE_HW_GUIDED 3
/* ---- end of mpifix ------------------------------------------------------------------ */
/* ---- MPI-4.0 sessions (11.3; api/session.c, core/sessboot.c, mpi/README.md
 * "MPI-4 sessions"): handles, process sets "mpi://WORLD" and "mpi://SELF",
 * communicators from groups keyed by a string tag, session error handlers ---- */
typedef int MPI_Session;
#define MPI_SESSION_NULL ((MPI_Session)0x0c000000)
#define MPI_MAX_PSET_NAME_LEN 256
#define MPI_MAX_STRINGTAG_LEN 256
typedef void MPI_Session_errhandler_function(MPI_Session *session, int *err, ...);
XM_API_(int, Session_init, (MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session))
XM_API_(int, Session_finalize, (MPI_Session *session))
XM_API_(int, Session_get_num_psets, (MPI_Session session, MPI_Info info, int *npset_names))
XM_API_(int, Session_get_nth_pset, (MPI_Session session, MPI_Info info, int n,
                                    int *pset_len, char *pset_name))
XM_API_(int, Session_get_info, (MPI_Session session, MPI_Info *info_used))
XM_API_(int, Session_get_pset_info, (MPI_Session session, const char *pset_name,
                                     MPI_Info *info))
XM_API_(int, Group_from_session_pset, (MPI_Session session, const char *pset_name,
                                       MPI_Group *newgroup))
XM_API_(int, Comm_create_from_group, (MPI_Group group, const char *stringtag, MPI_Info info,
                                      MPI_Errhandler errhandler, MPI_Comm *newcomm))
XM_API_(int, Session_create_errhandler, (MPI_Session_errhandler_function *session_errhandler_fn,
                                         MPI_Errhandler *errhandler))
XM_API_(int, Session_set_errhandler, (MPI_Session session, MPI_Errhandler errhandler))
XM_API_(int, Session_get_errhandler, (MPI_Session session, MPI_Errhandler *errhandler))
XM_API_(int, Session_call_errhandler, (MPI_Session session, int errorcode))
XM_API_(MPI_Fint, Session_c2f, (MPI_Session session))
XM_API_(MPI_Session, Session_f2c, (MPI_Fint session))
/* ---- end of MPI-4.0 sessions -------------------------------------------------------- */

#undef XM_API_

#ifdef __cplusplus
}
#endif
#endif /* LOOM_MPI_H */
