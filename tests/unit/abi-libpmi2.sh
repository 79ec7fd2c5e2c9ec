#!/bin/sh
# abi-libpmi2.sh - our client libraries against Slurm's, at the ABI level.
#
# Checks: (1) libpmi2.so.0 exports exactly the 22 functions of Slurm's
# libpmi2.so.0 (and the same set as Debian's library when installed), and
# libpmi.so.0 exactly the 33 PMI_* functions of the PMI-1 API; (2) SONAMEs
# are libpmi2.so.0 / libpmi.so.0 and the only NEEDED library is libc;
# (3) every constant, protocol string and struct layout of our pmi2.h equals
# Slurm's <slurm/pmi2.h> (abi_pmi2 built against each); (4) Slurm's
# prototypes compile against our headers (a conflicting type is an error);
# (5) a program built with Slurm's header runs on OUR library; (6) a binary
# built and linked against Slurm's libpmi2 (check_slurm_libpmi2) passes its
# wire tests when our libpmi2.so.0 is swapped in (LD_LIBRARY_PATH).
# Parts that need Slurm's files are skipped with a note when they are absent.
# Environment (from clients.mk): CLIENTS_LIBDIR, CLIENTS_INCDIR, CLIENTS_CC.
set -u
fail=0
bad() { echo "FAIL: $*"; fail=1; }
note() { echo "note: $*"; }

libdir=${CLIENTS_LIBDIR:?}
incdir=${CLIENTS_INCDIR:?}
cc=${CLIENTS_CC:-cc}
tmp=$(mktemp -d) || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

for tool in nm readelf; do
    command -v $tool >/dev/null 2>&1 || { echo "skip: $tool not found"; exit 77; }
done

syms() { nm -D --defined-only "$1" | awk '{print $3}' | sort -u; }
soname() { readelf -d "$1" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p'; }
needed() { readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p' | sort | tr '\n' ' '; }

# ---- (1)-(2) symbol sets and SONAMEs ----------------------------------------
cat >"$tmp/pmi2.expected" <<'LIST'
PMI2_Abort
PMI2_Finalize
PMI2_Info_GetJobAttr
PMI2_Info_GetJobAttrIntArray
PMI2_Info_GetNodeAttr
PMI2_Info_GetNodeAttrIntArray
PMI2_Info_GetSize
PMI2_Info_PutNodeAttr
PMI2_Init
PMI2_Initialized
PMI2_Job_Connect
PMI2_Job_Disconnect
PMI2_Job_GetId
PMI2_Job_GetRank
PMI2_Job_Spawn
PMI2_KVS_Fence
PMI2_KVS_Get
PMI2_KVS_Put
PMI2_Nameserv_lookup
PMI2_Nameserv_publish
PMI2_Nameserv_unpublish
PMIX_Ring
LIST
cat >"$tmp/pmi.expected" <<'LIST'
PMI_Abort
PMI_Args_to_keyval
PMI_Barrier
PMI_Finalize
PMI_Free_keyvals
PMI_Get_appnum
PMI_Get_clique_ranks
PMI_Get_clique_size
PMI_Get_id
PMI_Get_id_length_max
PMI_Get_kvs_domain_id
PMI_Get_options
PMI_Get_rank
PMI_Get_size
PMI_Get_universe_size
PMI_Init
PMI_Initialized
PMI_KVS_Commit
PMI_KVS_Create
PMI_KVS_Destroy
PMI_KVS_Get
PMI_KVS_Get_key_length_max
PMI_KVS_Get_my_name
PMI_KVS_Get_name_length_max
PMI_KVS_Get_value_length_max
PMI_KVS_Iter_first
PMI_KVS_Iter_next
PMI_KVS_Put
PMI_Lookup_name
PMI_Parse_option
PMI_Publish_name
PMI_Spawn_multiple
PMI_Unpublish_name
LIST

for lib in pmi2 pmi; do
    ours="$libdir/lib$lib.so.0"
    [ -f "$ours" ] || { bad "$ours not built"; continue; }
    syms "$ours" >"$tmp/$lib.ours"
    diff -u "$tmp/$lib.expected" "$tmp/$lib.ours" >"$tmp/$lib.diff" ||
        { bad "lib$lib.so.0 exports differ from the API list:"; cat "$tmp/$lib.diff"; }
    [ "$(soname "$ours")" = "lib$lib.so.0" ] || bad "lib$lib.so.0 SONAME is '$(soname "$ours")'"
    [ "$(needed "$ours")" = "libc.so.6 " ] || bad "lib$lib.so.0 NEEDED: $(needed "$ours")"
    echo "lib$lib.so.0: $(wc -l <"$tmp/$lib.ours") exported symbols, SONAME $(soname "$ours")"
done

sys=""
for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib; do
    [ -f "$d/libpmi2.so.0" ] && { sys="$d/libpmi2.so.0"; break; }
done
if [ -n "$sys" ]; then
    syms "$sys" >"$tmp/pmi2.sys"
    diff -u "$tmp/pmi2.sys" "$tmp/pmi2.ours" ||
        bad "libpmi2.so.0 exports differ from $sys"
    [ "$(soname "$sys")" = "$(soname "$libdir/libpmi2.so.0")" ] ||
        bad "SONAME $(soname "$libdir/libpmi2.so.0") != $(soname "$sys") of $sys"
    echo "same dynamic symbols and SONAME as $sys"
else
    note "no system libpmi2.so.0 (libpmi2-0): compared with the built-in list only"
fi

# ---- (3) constants, strings and layouts ----------------------------------------
if [ -x ./abi_pmi2_slurmhdr ]; then
    ./abi_pmi2_ours >"$tmp/layout.ours" || bad "abi_pmi2_ours failed"
    ./abi_pmi2_slurmhdr >"$tmp/layout.slurm" || bad "abi_pmi2_slurmhdr failed"
    if diff -u "$tmp/layout.slurm" "$tmp/layout.ours"; then
        echo "pmi2.h: $(wc -l <"$tmp/layout.ours") constants/strings/layouts equal Slurm's"
    else
        bad "pmi2.h differs from <slurm/pmi2.h> (above)"
    fi
    grep -q '^offsetof(struct MPID_Info,next)=16$' "$tmp/layout.ours" ||
        bad "MPID_Info.next not at offset 16"
else
    note "abi_pmi2_slurmhdr not built (no <slurm/pmi2.h>): layout comparison skipped"
fi

# ---- (4) Slurm's prototypes against our headers ----------------------------------
protos() { # the function declarations of a header, one per line
    awk '/^int (PMI|PMIX)/ { p = 1; s = "" }
         p { s = s " " $0; if ($0 ~ /;/) { print s; p = 0 } }' "$1"
}
for pair in "pmi2.h:/usr/include/slurm/pmi2.h" "pmi.h:/usr/include/slurm/pmi.h"; do
    ourh=${pair%%:*}
    theirs=${pair#*:}
    if [ ! -f "$theirs" ]; then
        note "$theirs absent: prototype check of $ourh skipped"
        continue
    fi
    { echo "#include \"$ourh\""; protos "$theirs"; } >"$tmp/proto.c"
    n=$(protos "$theirs" | wc -l)
    if $cc -std=c11 -Wall -Werror -fsyntax-only -I"$incdir" "$tmp/proto.c" 2>"$tmp/proto.err"; then
        echo "$ourh: $n prototypes of $theirs compile against ours"
    else
        bad "$ourh conflicts with $theirs:"
        cat "$tmp/proto.err"
    fi
done

# ---- (5) a program built with Slurm's header, run on our library ---------------
if [ -x ./abi_pmi2_slurmhdr ]; then
    out=$(env -u PMI_FD -u PMI_PORT -u PMI_RANK -u PMI_SIZE ./abi_pmi2_slurmhdr run) ||
        bad "abi_pmi2_slurmhdr run failed (exit $?): $out"
    echo "$out" | grep -q '^run=ok$' || bad "singleton run did not complete: $out"
    lib=$(echo "$out" | sed -n 's/^lib=//p')
    case "$lib" in
    "$libdir"/*) echo "Slurm-header program ran on $lib" ;;
    *) bad "PMI2_Init came from '$lib', not from $libdir" ;;
    esac
fi

# ---- (6) binary drop-in: Slurm-linked test program on our library -------------
if [ -x ./check_slurm_libpmi2 ]; then
    got=$(LD_LIBRARY_PATH="$libdir" ldd ./check_slurm_libpmi2 | sed -n 's/.*libpmi2.so.0 => \([^ ]*\).*/\1/p')
    case "$got" in
    "$libdir"/*) ;;
    *) bad "check_slurm_libpmi2 does not pick up our library (got '$got')" ;;
    esac
    if LD_LIBRARY_PATH="$libdir" CK_DEFAULT_TIMEOUT=30 ./check_slurm_libpmi2 >"$tmp/dropin.log" 2>&1; then
        echo "drop-in: $(grep -o '[0-9]*%: Checks: [0-9]*' "$tmp/dropin.log") of a Slurm-linked binary on our libpmi2"
    else
        bad "Slurm-linked check_slurm_libpmi2 fails on our libpmi2:"
        grep -E ':[FE]:' "$tmp/dropin.log"
    fi
fi

exit $fail
