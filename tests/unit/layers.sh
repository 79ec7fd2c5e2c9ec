#!/bin/sh
# layers.sh - libmpi's layering, checked on the built objects with nm: nothing below
# api/ (core/, coll/, dt/, shm/, tcp/, rma/, io/) references a symbol that only an api/
# object defines.  Any such reference fails the test: a helper that lower layers need
# belongs in core/ (core/util.c; the object model in core/obj.c, core/topo.c,
# core/attr.c, core/info.c), and a hook of one kind of object is a function pointer
# stored in the object (a request's ->release), not a call up by name.
# Usage: layers.sh [MPI_BUILD_DIR]  (default: ../../mpi from the tests/unit build dir,
# as `make check` runs it).  Skips (77) when the objects or nm are missing.
# Exit: 0 clean, 1 an upward reference (printed as "object: symbol").
dir=${1:-../../mpi}
command -v nm >/dev/null 2>&1 || { echo "layers.sh: SKIP: no nm"; exit 77; }
ls "$dir"/api/.libs/libmpi_la-*.o >/dev/null 2>&1 ||
    { echo "layers.sh: SKIP: no objects under $dir"; exit 77; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
nm -g --defined-only "$dir"/api/.libs/libmpi_la-*.o 2>/dev/null |
    awk 'NF == 3 {print $3}' | sort -u >"$tmp/api"
for d in core coll dt shm tcp rma io; do
    nm -g --defined-only "$dir"/$d/.libs/libmpi_la-*.o 2>/dev/null
done | awk 'NF == 3 {print $3}' | sort -u >"$tmp/below"
comm -23 "$tmp/api" "$tmp/below" >"$tmp/apionly"
bad=0
for o in "$dir"/core/.libs/libmpi_la-*.o "$dir"/coll/.libs/libmpi_la-*.o \
    "$dir"/dt/.libs/libmpi_la-*.o "$dir"/shm/.libs/libmpi_la-*.o \
    "$dir"/tcp/.libs/libmpi_la-*.o "$dir"/rma/.libs/libmpi_la-*.o \
    "$dir"/io/.libs/libmpi_la-*.o; do
    [ -f "$o" ] || continue
    nm -u "$o" | awk '{print $NF}' | sort -u | comm -12 - "$tmp/apionly" >"$tmp/up"
    if [ -s "$tmp/up" ]; then
        sed "s|^|$(basename "$o"): calls up into api/: |" "$tmp/up"
        bad=1
    fi
done
[ $bad = 0 ] && echo "layers.sh: nothing below api/ calls up into it"
exit $bad
