#!/bin/bash
# t0670-version-flags.sh - what MPICH and Open MPI users type to ask what they have:
#   mpiexec --version / -version (exit 0, "mpiexec (loom) VERSION" on stdout, as Open
#   MPI's "mpiexec (OpenRTE) 4.1.4"), mpiexec -h / --help / -help (exit 0, usage on
#   stdout), mpicc --version (the compiler's version on stdout, exit 0, as both
#   wrappers do), mpicc -v alone ("mpicc for Loom MPI version VERSION" on stdout, then
#   the compiler's -v, exit 0, as MPICH's; it used to try to link nothing and exit 1), mpicc --showme:version, mpicc -help, and
#   mpicxx the same; an unknown mpiexec option exits non-zero with a message.
. "$(dirname "$0")/lib.sh"
need_mpiexec
version=$(sed -n 's/^S\["PACKAGE_VERSION"\]="\(.*\)"$/\1/p' "$LOOM_BUILDDIR/config.status")
[ -n "$version" ] || fail "no PACKAGE_VERSION in config.status"

for a in --version -version; do
    run_cmd "$LOOM_MPIEXEC" "$a"
    assert_rc 0 "mpiexec $a"
    assert_grep -x "mpiexec (loom) $version" "$out" "mpiexec $a prints its version on stdout"
    assert_eq "$(wc -c <"$err")" 0 "bytes on stderr from mpiexec $a"
done
for a in -h --help -help; do
    run_cmd "$LOOM_MPIEXEC" "$a"
    assert_rc 0 "mpiexec $a"
    assert_grep "Usage: mpiexec" "$out" "mpiexec $a prints the usage on stdout"
done
run_cmd "$LOOM_MPIEXEC" --no-such-option
assert_failed_not_hung "mpiexec --no-such-option"
assert_grep "unknown option '--no-such-option'" "$err" "names the unknown option"

mpicc=$LOOM_BUILDDIR/mpi/mpicc
[ -x "$mpicc" ] || { say "no mpicc in this build"; finish; }
for w in mpicc mpicxx; do
    wp=$LOOM_BUILDDIR/mpi/$w
    [ -x "$wp" ] || continue
    case $w in mpicc) cc=${CC:-cc} ;; *) cc=${CXX:-c++} ;; esac
    command -v "$cc" >/dev/null || { say "no $cc: $w --version not run"; continue; }
    # the wrapper runs the compiler Loom was built with unless told: tell it
    env1=$([ $w = mpicc ] && echo LOOM_MPICC_CC || echo LOOM_MPICXX_CXX)
    run_cmd env "$env1=$cc" "$wp" --version
    assert_rc 0 "$w --version"
    "$cc" --version >"$TEST_TMP/cc.version" 2>/dev/null
    assert_grep -x "$(head -n 1 "$TEST_TMP/cc.version")" "$out" "$w --version is the compiler's version on stdout"
    run_cmd env "$env1=$cc" "$wp" -v
    assert_rc 0 "$w -v"
    assert_grep -x "$w for Loom MPI version $version" "$out" "$w -v names Loom MPI $version first"
    assert_grep -i "version" "$err" "$w -v then runs the compiler's -v"
    run_cmd "$wp" --showme:version
    assert_rc 0 "$w --showme:version"
    assert_grep -x "$w: Loom MPI $version" "$out" "$w --showme:version"
    run_cmd "$wp" -help
    assert_rc 0 "$w -help"
    assert_grep "-show" "$out" "$w -help lists -show"
done
finish
