#!/usr/bin/env bash
# timed.sh LABEL COMMAND...: run COMMAND, then print its wall time under LABEL; exit with COMMAND's status.
label=$1
shift
start=$(date +%s)
"$@"
status=$?
elapsed=$(( $(date +%s) - start ))
printf '%s: wall time %dm %02ds (exit status %d)\n' "$label" $((elapsed / 60)) $((elapsed % 60)) "$status"
exit "$status"
