#!/bin/sh
# help2man's "program": `help-all.sh PROG --help` prints PROG's --help followed by each
# subcommand's, each under a heading help2man turns into a section, so the man page is made
# from the same text as --help and cannot drift from it. --version is passed through.
set -e
prog=$1; shift
if [ "$1" = "--version" ]; then exec "$prog" --version; fi
name=$(basename "$prog")
"$prog" --help | sed "s|^Usage: [^ ]*|Usage: $name|"
for sub in $("$prog" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p'); do
  opts=$("$prog" "$sub" --help | sed -n '/^Options:$/,$p' | grep -v -e '^Options:$' -e '^  -h,--help ' || true)
  [ -n "$(echo "$opts" | tr -d '[:space:]')" ] || continue
  printf '\nOptions of %s %s:\n%s\n' "$name" "$sub" "$opts"
done
