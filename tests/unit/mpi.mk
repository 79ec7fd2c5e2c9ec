# tests/unit/mpi.mk - unit tests of the MPI area (included by Makefile.am: the
# coordinator adds "include mpi.mk" inside "if HAVE_CHECK").
#   check_shm_queue: mpi/shm/shm_queue.h (MPSC queue: many producers, one consumer,
#                    FIFO per producer, no loss, no duplicate)
#   check_mpi_boot:  mpi/core/boot.c's PMI_process_mapping parser
check_PROGRAMS += check_shm_queue check_mpi_boot
TESTS += check_shm_queue check_mpi_boot

check_shm_queue_SOURCES = check_shm_queue.c
check_shm_queue_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/shm
check_shm_queue_LDADD = $(CHECK_LIBS) -lpthread

check_mpi_boot_SOURCES = check_mpi_boot.c $(top_srcdir)/mpi/core/boot.c \
	$(top_srcdir)/mpi/core/obj.c
check_mpi_boot_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include -I$(top_srcdir)/mpi/core
check_mpi_boot_LDADD = $(top_builddir)/libpmi2/libpmi2.la $(CHECK_LIBS)

# datatypes (area A)
#   check_dtype: mpi/dt/ engine: constructors' bounds and flattened blocks against
#                hand-computed layouts, pack/unpack split at every offset
check_PROGRAMS += check_dtype
TESTS += check_dtype
check_dtype_SOURCES = check_dtype.c $(top_srcdir)/mpi/dt/dtype.c \
	$(top_srcdir)/mpi/dt/derived.c $(top_srcdir)/mpi/dt/flatten.c
check_dtype_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include -I$(top_srcdir)/mpi/dt
check_dtype_LDADD = $(CHECK_LIBS)
