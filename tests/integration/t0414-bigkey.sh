#!/bin/bash
# t0414-bigkey.sh - failure: rank 1 of pmi_misbehave does 'bigkey' (see t0400-misbehave.sh).
SCENARIO=bigkey
. "$(dirname "$0")/t0400-misbehave.sh"
