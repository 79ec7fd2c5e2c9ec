/*
 * hwsplit.h - the hardware resources this process is restricted to, for
 *   MPI_Comm_split_type's MPI-4.0 split types MPI_COMM_TYPE_HW_GUIDED and
 *   MPI_COMM_TYPE_HW_UNGUIDED (api/comm.c; implemented with hwloc in core/hwsplit.c).
 *
 * A colour names one instance of a resource type on one node: processes with equal
 * colours share that instance (and use no other instance of the type); MPI_UNDEFINED
 * when this process runs on CPUs of several instances, the type is unknown, or hwloc
 * is not available.
 */
#ifndef XM_HWSPLIT_H
#define XM_HWSPLIT_H

/* resource type names (case-insensitive): "mpi_shared_memory" (the node), "machine",
 * "package"/"socket", "numanode", "l3cache", "l2cache", "l1cache" (also l?dcache,
 * l?ucache; l?icache), "core", "pu"/"hwthread".  Returns the colour (>= 0) or
 * MPI_UNDEFINED. */
int xm_hw_color(const char *type);

/* the levels MPI_COMM_TYPE_HW_UNGUIDED tries, largest first */
#define XM_HW_LEVELS 8
extern const char *const xm_hw_levels[XM_HW_LEVELS];

#endif
