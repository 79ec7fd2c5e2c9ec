# tests/unit/launcher.mk - unit tests of this area (included by Makefile.am).
