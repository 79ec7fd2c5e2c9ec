# tests/security/net.mk - (fragment of tests/security/Makefile.am; see there)
