#!/bin/bash
# t0411-die-before-fence.sh - failure: rank 1 of pmi_misbehave does 'die-before-fence' (see t0400-misbehave.sh).
SCENARIO=die-before-fence
. "$(dirname "$0")/t0400-misbehave.sh"
