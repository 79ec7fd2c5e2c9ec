# tests/security/mpitcp.mk - (fragment of tests/security/Makefile.am; see there)
