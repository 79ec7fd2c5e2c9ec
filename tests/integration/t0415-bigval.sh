#!/bin/bash
# t0415-bigval.sh - failure: rank 1 of pmi_misbehave does 'bigval' (see t0400-misbehave.sh).
SCENARIO=bigval
. "$(dirname "$0")/t0400-misbehave.sh"
