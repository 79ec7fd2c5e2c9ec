# tests/security/hosts.mk - (fragment of tests/security/Makefile.am; see there)
