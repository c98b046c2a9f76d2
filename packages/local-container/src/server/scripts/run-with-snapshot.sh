#!/bin/bash
# Runs a command after sourcing a snapshot of its session shell's variables, functions and aliases, so a
# streamed or background command sees the session as a subshell of it would; what it changes stays its
# own (see command-runner.ts). The snapshot is removed once read.
#
#   run-with-snapshot.sh <snapshot> <command>
# shellcheck disable=SC1090 # the snapshot is written by the session shell at run time
source "$1" 2>/dev/null
rm -f -- "$1"
eval "$2"
