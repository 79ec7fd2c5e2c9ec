#!/bin/bash
# t-net-creds.sh - what a node server hands to whatever answers at an address it was
# given (issue 18 item 6), as root with munge: a fake tree parent and a fake rendezvous
# server keep the credential a real node sends them.  Another uid (nobody) must not be
# able to decode it (MUNGE_OPT_UID_RESTRICTION: EMUNGE_CRED_UNAUTHORIZED), and the
# credential the fake parent got must be refused by the real parent on a connection of
# the fake's own (bound to the listener's nonce).  Before the fix the child spoke first
# with an unrestricted root credential that any uid could decode and that the real
# parent accepted.
. "$(dirname "$0")/../integration/lib.sh"
: "${LOOM_SECDIR:=$LOOM_BUILDDIR/tests/security}"
tool=$LOOM_SECDIR/net_tool
[ -x "$tool" ] || skip "net_tool not built ($tool)"
[ "$(id -u)" -eq 0 ] || skip "needs root (a second uid decodes the credentials)"
command -v munge >/dev/null && echo x | munge >/dev/null 2>&1 || skip "munged does not answer"

run_cmd -t 60 "$tool" linkcred
sed 's/^/    | /' "$err"
if [ "$rc" -eq 77 ]; then skip "$(tail -n 1 "$err")"; fi
assert_rc 0 "tree link: the child's credential is useless to a fake parent"
assert_grep -E "nobody|65534" "$err" "the other-uid decode was tried"

run_cmd -t 60 "$tool" rdvcred
sed 's/^/    | /' "$err"
assert_rc 0 "rendezvous: the node's credential is useless to a fake server of another uid"
finish
