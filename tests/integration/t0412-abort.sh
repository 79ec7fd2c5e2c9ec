#!/bin/bash
# t0412-abort.sh - failure: rank 1 of pmi_misbehave does 'abort' (see t0400-misbehave.sh).
SCENARIO=abort
. "$(dirname "$0")/t0400-misbehave.sh"
