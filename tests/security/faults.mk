# tests/security/faults.mk - (fragment of tests/security/Makefile.am; see there)
