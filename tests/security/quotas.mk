# tests/security/quotas.mk - (fragment of tests/security/Makefile.am; see there)
