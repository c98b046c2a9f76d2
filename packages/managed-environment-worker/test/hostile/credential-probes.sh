#!/bin/bash
# Run by an agent's tool call: prints what a hostile tool could find of the worker's credentials, for the
# test to search: every ANTHROPIC_/OMA_ variable in any readable process environment, every command line,
# and every launcher file left under /tmp or /workspace.
for file in /proc/[0-9]*/environ; do
  tr '\0' '\n' < "$file" 2>/dev/null | grep -aE '^(ANTHROPIC|OMA)_'
done | sort -u
for file in /proc/[0-9]*/cmdline; do
  tr '\0' ' ' < "$file" 2>/dev/null
  echo
done | grep -v '^$' | sort -u
find /tmp /workspace -name '.oma-*' -type f -exec cat {} + 2>/dev/null
echo probe-done
