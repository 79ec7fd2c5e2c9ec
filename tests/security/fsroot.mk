# tests/security/fsroot.mk - (fragment of tests/security/Makefile.am; see there)
