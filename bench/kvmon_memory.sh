#!/usr/bin/env bash
# Does kvmon's memory level off? An accelerated soak: kvmon samples a redis-server at a high rate
# with --listen and a short --history, so in minutes it goes through as many ticks as hours at
# 1 Hz, its history ring fills and turns over, and its results file outgrows SQLite's page cache
# (2000 KiB). VmRSS is read every --every seconds; the report gives the samples and the growth
# over the last third of the run (0 once both bounds are reached).
#
# Usage: bench/kvmon_memory.sh [--minutes M] [--interval D] [--history D] [--every S]
#                              [--kvmon PATH] [--out FILE]
#   --minutes M    how long (default 5)
#   --interval D   kvmon's --interval (default 10ms: 100 ticks a second)
#   --history D    kvmon's --history (default 10s)
#   --every S      seconds between RSS readings (default 10)
#   --kvmon PATH   the binary (default $KV_BUILD_DIR or build/, then monitor/kvmon)
#   --out FILE     the markdown report (default bench/results/kvmon_memory-<date>.md)
# Starts its own redis-server on a free loopback port in a temp dir; stops everything on exit.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
minutes=5 interval=10ms history=10s every=10 kvmon="" out=""
command_line="bench/kvmon_memory.sh $*"
while (($#)); do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --interval) interval=$2; shift 2 ;;
    --history) history=$2; shift 2 ;;
    --every) every=$2; shift 2 ;;
    --kvmon) kvmon=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "kvmon_memory: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $minutes =~ ^[0-9]+$ ]] && ((minutes >= 1)) ||
  { echo "kvmon_memory: --minutes must be a whole number >= 1" >&2; exit 2; }
[[ $every =~ ^[0-9]+$ ]] && ((every >= 1)) ||
  { echo "kvmon_memory: --every must be a whole number of seconds >= 1" >&2; exit 2; }
[[ -n "$kvmon" ]] || kvmon=${KV_BUILD_DIR:-$root/build}/monitor/kvmon
for prog in "$kvmon" redis-server; do
  command -v "$prog" >/dev/null || { echo "kvmon_memory: missing: $prog" >&2; exit 1; }
done
source "$root/scripts/lib.sh"
stamp=$(date +%Y-%m-%dT%H%M)
[[ -n "$out" ]] || out="$root/bench/results/kvmon_memory-$stamp.md"
mkdir -p "$(dirname "$out")"
work=$(mktemp -d "${TMPDIR:-/tmp}/kvmon-memory-XXXXXX")
pids=()
kv_stop_on_exit kvmon_memory "$work"

kv_start_redis "$work"
kvmon_port=$(kv_free_port)
kvmon_cmd=("$kvmon" --db "$work/kvmon.db" --pid "$redis_pid" --interval "$interval"
           --listen "127.0.0.1:$kvmon_port" --history "$history" --log-level warn)
"${kvmon_cmd[@]}" 2>"$work/kvmon.log" &
kvmon_pid=$!
pids+=("$kvmon_pid")
kv_wait_port "$kvmon_port" "$work/kvmon.log"

end_s=$((minutes * 60))
echo "kvmon_memory: kvmon pid $kvmon_pid, ${minutes} min, RSS every ${every} s" >&2
samples=()
for ((t = 0; t <= end_s; t += every)); do
  rss=$(awk '/^VmRSS/ {print $2}' "/proc/$kvmon_pid/status" 2>/dev/null) ||
    { echo "kvmon_memory: kvmon exited:" >&2; cat "$work/kvmon.log" >&2; exit 1; }
  samples+=("$t:$rss")
  ((t + every <= end_s)) && sleep "$every"
done
ticks=$(sqlite3 "$work/kvmon.db" "SELECT count(*) FROM process_samples" 2>/dev/null || echo '?')
db_kib=$(($(stat -c %s "$work/kvmon.db") / 1024))
half=$((end_s * 2 / 3))
growth=$(printf '%s\n' "${samples[@]}" | awk -F: -v h="$half" '
  $1 >= h && !first { first = $2 } { last = $2 } END { printf "%+d", last - first }')
report=$(
  echo "# kvmon memory, accelerated, $(date '+%Y-%m-%d %H:%M %Z')"
  echo
  echo "- command: \`$command_line\`"
  echo "- kvmon: \`kvmon --db kvmon.db --pid <redis> --interval $interval --listen 127.0.0.1:PORT --history $history\` ($("$kvmon" --version 2>/dev/null | head -1), git $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "- machine: $(nproc) CPUs, kernel $(uname -r), load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- process samples stored: $ticks; kvmon.db at the end: $db_kib KiB (SQLite's page cache holds at most 2000 KiB)"
  echo
  echo "VmRSS growth over the last third (from ${half} s to ${end_s} s): **$growth KiB**"
  echo
  echo "RSS samples (s:KiB): ${samples[*]}"
)
echo "$report" >"$out"
echo "$report"
echo "kvmon_memory: report written to $out" >&2
