# tests/slurm/release_env.sh - which Slurm release the private clusters and the srun tests run;
# sourced (POSIX sh) by cluster.sh, lib.sh and t-slurm-pmi2-clients.sh, never run.
#
# LOOM_SLURM_PREFIX=P, the `make install` prefix of a Slurm release (scripts/slurm-release.sh
# builds one: eval "$(scripts/slurm-release.sh 26.05 --env)"), selects that release:
#   - P/bin and P/sbin go first in PATH, so srun, sbatch, salloc, scontrol, squeue, sinfo,
#     scancel, slurmctld and slurmd are the release's (slurmd starts P/sbin/slurmstepd);
#   - slurm_sys_plugindir prints P/lib/slurm (the release's plugins; Loom's dir goes first);
#   - slurm_release_programs builds the "Slurm's own libpmi2" clients against P/lib/libpmi2.so.
# Unset: the installed (Debian) Slurm on PATH, exactly as before.
# Provides:
#   slurm_release               major.minor.micro of the slurmctld on PATH (e.g. 26.05.3)
#   slurm_release_at_least X Y  true if that release is X.Y or newer
#   slurm_sys_plugindir         the release's own plugin directory
#   slurm_release_programs PROGDIR WORKDIR
#                               prints a program directory to use instead of PROGDIR: with
#                               LOOM_SLURM_PREFIX unset, PROGDIR itself; else WORKDIR/programs
#                               holding links to every file of PROGDIR except
#                               pmi2_kvstest_slurm and pmi_misbehave_slurm, which are compiled
#                               there from tests/programs/*.c against P/include/slurm/pmi2.h
#                               and linked to P/lib/libpmi2.so (rpath P/lib). Returns 1 when
#                               that compile fails (its errors on stderr).

if [ -n "${LOOM_SLURM_PREFIX:-}" ]; then
    if [ ! -x "$LOOM_SLURM_PREFIX/sbin/slurmd" ] || [ ! -x "$LOOM_SLURM_PREFIX/bin/srun" ]; then
        echo "release_env.sh: LOOM_SLURM_PREFIX=$LOOM_SLURM_PREFIX has no sbin/slurmd and bin/srun" >&2
        exit 1
    fi
    case ":$PATH:" in
    *":$LOOM_SLURM_PREFIX/bin:$LOOM_SLURM_PREFIX/sbin:"*) ;;
    *) PATH=$LOOM_SLURM_PREFIX/bin:$LOOM_SLURM_PREFIX/sbin:$PATH; export PATH ;;
    esac
fi

slurm_release() {
    slurmctld -V 2>/dev/null | awk 'NR == 1 { print $2 }'
}

slurm_release_at_least() {
    _rv=$(slurm_release)
    _rmaj=${_rv%%.*}
    _rmin=${_rv#*.}
    _rmin=${_rmin%%.*}
    case $_rmaj$_rmin in ''|*[!0-9]*) return 1 ;; esac
    [ "$_rmaj" -gt "$1" ] || { [ "$_rmaj" -eq "$1" ] && [ "$_rmin" -ge "$2" ]; }
}

slurm_sys_plugindir() {
    if [ -n "${LOOM_SLURM_PREFIX:-}" ]; then echo "$LOOM_SLURM_PREFIX/lib/slurm"; return; fi
    if [ -n "${LOOM_SLURM_SYSPLUGINDIR:-}" ]; then echo "$LOOM_SLURM_SYSPLUGINDIR"; return; fi
    for _d in /usr/lib/x86_64-linux-gnu/slurm-wlm /usr/lib/aarch64-linux-gnu/slurm-wlm \
             /usr/lib64/slurm /usr/lib/slurm /usr/local/lib/slurm; do
        [ -f "$_d/mpi_pmi2.so" ] && { echo "$_d"; return; }
    done
    echo /usr/lib/x86_64-linux-gnu/slurm-wlm
}

slurm_release_programs() {
    if [ -z "${LOOM_SLURM_PREFIX:-}" ]; then echo "$1"; return 0; fi
    _src=$(cd "$(dirname "$0")/../programs" && pwd) || return 1
    _to=$2/programs
    mkdir -p "$_to" || return 1
    for _f in "$1"/*; do
        [ -f "$_f" ] || continue
        case ${_f##*/} in pmi2_kvstest_slurm|pmi_misbehave_slurm) continue ;; esac
        ln -sf "$_f" "$_to/${_f##*/}" || return 1
    done
    _p=$LOOM_SLURM_PREFIX
    cc -O2 -DKVSTEST_SLURM -I"$_p/include" -I"$_src" -o "$_to/pmi2_kvstest_slurm" \
        "$_src/pmi2_kvstest.c" "$_src/kvstest_util.c" \
        -L"$_p/lib" -Wl,-rpath,"$_p/lib" -lpmi2 >&2 || return 1
    cc -O2 -DKVSTEST_SLURM -I"$_p/include" -I"$_src" -o "$_to/pmi_misbehave_slurm" \
        "$_src/pmi_misbehave.c" -L"$_p/lib" -Wl,-rpath,"$_p/lib" -lpmi2 >&2 || return 1
    echo "$_to"
}
