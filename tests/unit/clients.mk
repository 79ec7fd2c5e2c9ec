# tests/unit/clients.mk - unit tests of this area (included by Makefile.am).
