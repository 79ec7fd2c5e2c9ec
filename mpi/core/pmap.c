/*
 * pmap.c - libmpi's copy of common/pmap.c, the one PMI_process_mapping parser
 *          (loom_pmap_parse, see common/pmap.h), used by boot_pmi2.c.
 *
 * Contract: compiled into libmpi.so so that the library needs nothing of the build
 *   tree's convenience libraries; libmpi.map keeps every loom_* symbol local.
 */
#include "../../common/pmap.c"
