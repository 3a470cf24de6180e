#!/usr/bin/env bash
# The man pages contain every option of every --help: kvdrive's, each of its subcommands' and
# kvmon's, and the hand-written sections. Usage: man_pages_test.sh BUILD_DIR
set -uo pipefail
build=$1
failed=0
# The page as a reader sees it (man-db), or its roff with the markup taken out.
render() {
  if command -v man >/dev/null; then MANWIDTH=200 man -l "$1" 2>/dev/null
  else sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/^\.SH "\{0,1\}\([^"]*\)"\{0,1\}$/\1/' -e 's/^\.[A-Za-z]* *//' "$1"; fi
}
for prog in kvdrive kvmon; do
  page=$build/packaging/$prog.1
  [[ -s "$page" ]] || { echo "FAILED: $page not built (help2man missing?)"; exit 1; }
  bin=$build/$([[ $prog == kvdrive ]] && echo driver || echo monitor)/$prog
  text=$(render "$page")
  subs=$("$bin" --help | sed -n '/^Subcommands:/,/^$/p' | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p')
  for cmd in "" $subs; do
    for opt in $("$bin" $cmd --help | grep -oE -- '(^|[ ,])--?[a-zA-Z][a-zA-Z-]*' | grep -oE -- '--?[a-zA-Z][a-zA-Z-]*' | sort -u); do
      grep -qF -- "$opt" <<<"$text" || { echo "FAILED: $prog $cmd $opt is not in $page"; failed=1; }
    done
    [[ -z "$cmd" ]] || grep -qF "Options of $prog $cmd:" <<<"$text" || [[ $("$bin" $cmd --help | grep -c -- '^  --') == 0 ]] ||
      { echo "FAILED: no section for $prog $cmd"; failed=1; }
  done
  for section in SYNOPSIS DESCRIPTION OPTIONS "EXIT STATUS" FILES EXAMPLES "SEE ALSO"; do
    grep -q "^$section" <<<"$text" || { echo "FAILED: $prog has no $section section"; failed=1; }
  done
done
grep -q "URI SYNTAX" <<<"$(render "$build/packaging/kvdrive.1")" || { echo "FAILED: kvdrive: no URI SYNTAX"; failed=1; }
grep -q "/etc/kvmon/kvmon.conf" <<<"$(render "$build/packaging/kvmon.1")" || { echo "FAILED: kvmon: no kvmon.conf"; failed=1; }
grep -q "cannot be listened on" <<<"$(render "$build/packaging/kvmon.1")" || { echo "FAILED: kvmon: exit 1 on listen"; failed=1; }
((failed == 0)) && echo "ok: man pages hold every option"
exit $failed
