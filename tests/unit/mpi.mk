# tests/unit/mpi.mk - unit tests of libmpi (included by Makefile.am inside
# "if HAVE_CHECK").
#   check_shm_queue:  mpi/shm/shm_queue.h (MPSC queue: many producers, one consumer,
#                     FIFO per producer, no loss, no duplicate)
#   check_mpi_boot:   libmpi's node map from PMI_process_mapping (common/pmap.c,
#                     the parser libpmi uses too)
#   check_mpi_launch: mpi/core/boot_launch.c: PMI-2, PMIx or singleton from the
#                     launcher's environment, the refusal of a silent singleton
check_PROGRAMS += check_shm_queue check_mpi_boot check_mpi_launch
TESTS += check_shm_queue check_mpi_boot check_mpi_launch

check_shm_queue_SOURCES = check_shm_queue.c
check_shm_queue_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/shm
check_shm_queue_LDADD = $(CHECK_LIBS) -lpthread

check_mpi_boot_SOURCES = check_mpi_boot.c $(top_srcdir)/mpi/core/boot.c \
	$(top_srcdir)/mpi/core/boot_launch.c $(top_srcdir)/mpi/core/boot_pmi2.c \
	$(top_srcdir)/mpi/core/boot_pmix.c $(top_srcdir)/mpi/core/boot_single.c \
	$(top_srcdir)/mpi/core/obj.c $(top_srcdir)/mpi/core/pmap.c
check_mpi_boot_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include -I$(top_srcdir)/mpi/core
if HAVE_PMIX
check_mpi_boot_CPPFLAGS += $(PMIX_CFLAGS)
endif
check_mpi_boot_LDADD = $(top_builddir)/libpmi2/libpmi2.la $(CHECK_LIBS) -ldl -lpthread

check_mpi_launch_SOURCES = check_mpi_launch.c $(top_srcdir)/mpi/core/boot_launch.c
check_mpi_launch_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/core
check_mpi_launch_LDADD = $(CHECK_LIBS)

# datatypes
#   check_dtype: mpi/dt/ engine: constructors' bounds and flattened blocks against
#                hand-computed layouts, pack/unpack split at every offset
check_PROGRAMS += check_dtype
TESTS += check_dtype
check_dtype_SOURCES = check_dtype.c $(top_srcdir)/mpi/dt/dtype.c \
	$(top_srcdir)/mpi/dt/derived.c $(top_srcdir)/mpi/dt/flatten.c
check_dtype_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include -I$(top_srcdir)/mpi/dt
check_dtype_LDADD = $(CHECK_LIBS)

# collectives and communicators
#   check_coll_op: mpi/coll/op.c: every predefined op on the types it applies to,
#                  MINLOC/MAXLOC ties, refusals, user ops, ops on a contiguous derived type
check_PROGRAMS += check_coll_op
TESTS += check_coll_op
check_coll_op_SOURCES = check_coll_op.c $(top_srcdir)/mpi/coll/op.c \
	$(top_srcdir)/mpi/dt/dtype.c $(top_srcdir)/mpi/dt/derived.c $(top_srcdir)/mpi/dt/flatten.c
check_coll_op_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include -I$(top_srcdir)/mpi/dt \
	-I$(top_srcdir)/mpi/coll
check_coll_op_LDADD = $(CHECK_LIBS)

# matcher
#   check_match: mpi/core/p2p.c driven through xm_handle_pkt() without a transport
#                (order, wildcards, contexts, truncation, fragments, RTS + CMA, cancel,
#                matched probe); every case asserts with ck_assert_* and a failed one fails
#                `make check`.  Links mpi/shm/lmt.c: with no segment (the stub
#                xm_shm_lmt_slot() in check_match.c returns NULL) a large receive is copied by
#                the receiver alone, through the same xm_vm_copy() as the plain CMA path.
check_PROGRAMS += check_match
TESTS += check_match
check_match_SOURCES = check_match.c $(top_srcdir)/mpi/core/p2p.c \
	$(top_srcdir)/mpi/core/match.c $(top_srcdir)/mpi/core/rdv.c \
	$(top_srcdir)/mpi/core/funnel.c $(top_srcdir)/mpi/core/progress.c \
	$(top_srcdir)/mpi/core/proc.c \
	$(top_srcdir)/mpi/shm/lmt.c \
	$(top_srcdir)/mpi/core/obj.c $(top_srcdir)/mpi/dt/dtype.c \
	$(top_srcdir)/mpi/dt/derived.c $(top_srcdir)/mpi/dt/flatten.c \
	$(top_srcdir)/mpi/core/xsec.c
check_match_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/include -I$(top_srcdir)/mpi/core \
	-I$(top_srcdir)/mpi/shm
check_match_LDADD = $(CHECK_LIBS)

# dynamic processes
#   check_mpi_dynwire: mpi/core/dynwire.c: port names, accept/connect control messages
#                      and the Comm_join hello, accepted and refused forms
check_PROGRAMS += check_mpi_dynwire
TESTS += check_mpi_dynwire
check_mpi_dynwire_SOURCES = check_mpi_dynwire.c $(top_srcdir)/mpi/core/dynwire.c
check_mpi_dynwire_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/core
check_mpi_dynwire_LDADD = $(CHECK_LIBS)
#   check_mpi_proc: mpi/core/proc.c: the process table (ids, growth hooks, bad cards)
check_PROGRAMS += check_mpi_proc
TESTS += check_mpi_proc
check_mpi_proc_SOURCES = check_mpi_proc.c $(top_srcdir)/mpi/core/proc.c
check_mpi_proc_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/mpi/core
check_mpi_proc_LDADD = $(CHECK_LIBS)

# libmpi's layers: nothing below api/ references a symbol only api/ defines (nm on the
# built objects; the remaining object-model hooks are listed in the script)
TESTS += layers.sh
EXTRA_DIST += layers.sh
