#!/bin/bash
# t0413-garbage.sh - failure: rank 1 of pmi_misbehave does 'garbage' (see t0400-misbehave.sh).
SCENARIO=garbage
. "$(dirname "$0")/t0400-misbehave.sh"
