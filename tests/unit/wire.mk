# tests/unit/wire.mk - unit tests of this area (included by Makefile.am).
