#!/bin/sh
# autogen.sh - regenerate the build system (configure, Makefile.in, libtool).
set -e
cd "$(dirname "$0")"
mkdir -p config
libtoolize --copy --quiet
autoreconf --force --install
