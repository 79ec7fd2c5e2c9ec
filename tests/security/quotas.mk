# tests/security/quotas.mk - (fragment of tests/security/Makefile.am; see there)
# The PMI server core (pmiserv/) against a hostile task: quotas on the KVS, node
# attributes and published names, and what a task can make the core log.
# quotas_client speaks the PMI-1/PMI-2 wire itself (common/pmi_wire.c).
check_PROGRAMS += quotas_client
quotas_client_SOURCES = quotas_client.c
quotas_client_LDADD = $(top_builddir)/common/libloomcommon.la
EXTRA_DIST += quotas_lib.sh
TESTS += t-quotas-kvs.sh t-quotas-tables.sh t-quotas-logs.sh
EXTRA_DIST += t-quotas-kvs.sh t-quotas-tables.sh t-quotas-logs.sh
TESTS += t-quotas-slurm.sh
EXTRA_DIST += t-quotas-slurm.sh
