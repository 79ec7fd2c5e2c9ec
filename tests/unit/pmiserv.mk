# tests/unit/pmiserv.mk - unit tests of this area (included by Makefile.am).
