#!/bin/bash
# t0131-appnum.sh - MPMD through PMI: each section's ranks get their section's appnum.
# The ranks are bash speaking the PMI-1 wire protocol on PMI_FD by hand (init,
# get_appnum, get_size, finalize), so this also checks the raw line protocol.
. "$(dirname "$0")/lib.sh"
need_mpiexec

client='
fd=$PMI_FD
ask() { printf "%s\n" "$1" >&$fd; IFS= read -r -t 20 reply <&$fd || { echo "rank $PMI_RANK: no reply to $1" >&2; exit 3; }; }
ask "cmd=init pmi_version=1 pmi_subversion=1"; init=$reply
ask "cmd=get_appnum"; app=$reply
ask "cmd=get_universe_size"; usize=$reply
ask "cmd=finalize"; fin=$reply
echo "rank=$PMI_RANK init=[$init] app=[$app] usize=[$usize] fin=[$fin]"
'
run_job -n 2 bash -c "$client" : -n 1 bash -c "$client" : -n 2 bash -c "$client"
assert_rc 0 "three sections of PMI-1 wire clients"
for r in 0 1 2 3 4; do
    case $r in 0 | 1) a=0 ;; 2) a=1 ;; *) a=2 ;; esac
    line=$(grep "^rank=$r " "$out")
    if [ -z "$line" ]; then
        fail "no output from rank $r"; show_output; continue
    fi
    for want in "init=[cmd=response_to_init" "rc=0" "app=[cmd=appnum" "appnum=$a" \
        "usize=[cmd=universe_size" "size=5" "fin=[cmd=finalize_ack"; do
        case "$line" in
            *"$want"*) ok "rank $r: '$want'" ;;
            *) fail "rank $r: '$want' missing in: $line" ;;
        esac
    done
done

finish
