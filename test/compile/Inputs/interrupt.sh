#!/bin/bash
# Runs attn-compile ($2, with the arguments after it) and sends it signal
# $1 once its temporary directory exists (under $TMPDIR, which the caller
# points at an empty folder); then says how it ended and what it left.
set -u
signal=$1
shift
"$@" &
pid=$!
for _ in $(seq 600); do
  [ -n "$(ls -A "$TMPDIR")" ] && break
  sleep 0.05
done
echo "temporary directory: $(ls -A "$TMPDIR" | sed 's/[-_.0-9a-zA-Z]*$/present/')"
kill -"$signal" "$pid"
wait "$pid"
echo "exit status: $?"
echo "left in TMPDIR: $(ls -A "$TMPDIR" | wc -l)"
