#!/bin/bash
# t0416-no-finalize.sh - failure: rank 1 of pmi_misbehave does 'no-finalize' (see t0400-misbehave.sh).
SCENARIO=no-finalize
. "$(dirname "$0")/t0400-misbehave.sh"
