/* mpich_finalize_shim.c - LD_PRELOAD work-around for a hang of Debian's MPICH 4.0.2
 * (ch4:ucx) in MPI_Finalize when ranks talked over UCX's TCP transport.
 *
 * Contract: built by the srun tests and benches with `cc -shared -fPIC` into their
 * temporary directory and preloaded into Debian-MPICH ranks that run across nodes.
 * It replaces ucp_disconnect_nb() by a no-op that reports immediate completion (NULL is
 * UCS_OK as a ucs_status_ptr_t), so MPICH's finalize does not wait for a peer that is
 * already inside the PMI barrier and no longer progresses UCX.
 *
 * Notes: this works around the MPI peer's bug (fixed upstream in MPICH 4.2.0), not a
 *   bug of Loom or Slurm; see the Slurm notes of the project. Connections are torn down
 *   by process exit instead. Programs that do not use UCX never call it.
 */
#include <stddef.h>

void *ucp_disconnect_nb(void *ep);

void *ucp_disconnect_nb(void *ep)
{
    (void)ep;
    return NULL;
}
