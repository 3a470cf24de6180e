#!/usr/bin/env bash
# How steady a Redis held to 2 % of a core by a CPU cgroup is, by the period its quota comes in:
# the capacity search's knee test (tests/driver/integration/search_integration_test.cpp) needs
# a store whose capacity holds from step to step. For each period (alternating, round by round,
# so a shared machine's drift hits both alike) it starts a redis-server in a fresh cgroup with
# quota = 2 % of the period, runs `kvdrive run --search --rates 2000,600,600,600` (one step far
# past the knee, then three below it, 4 KiB values on 16 connections, as the test), and records
# each step's achieved rate. A "dip" is a step at 600 req/s that achieved less than 90 % of it.
# It also sets kvdrive's request count beside Redis's own GET and SET calls (INFO commandstats),
# so a dip is seen to be the store's, not the client's counting.
#
# Usage: bench/quota_period.sh [--rounds N] [--periods LIST] [--kvdrive PATH] [--out FILE]
#   --rounds N      runs per period (default 10)
#   --periods LIST  periods in µs, comma-separated (default 50000,200000)
#   --kvdrive PATH  default $KV_BUILD_DIR/driver/kvdrive, else build/driver/kvdrive
#   --out FILE      markdown report (default bench/results/quota_period-<date>.md)
# Needs root and a cgroup v1 cpu or v2 cpu controller. About 16 s per run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=10 periods=50000,200000 kvdrive="" out=""
command_line="$0 $*"
while (($#)); do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --periods) periods=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) echo "quota_period: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[0-9]+$ ]] && ((rounds >= 1)) ||
  { echo "quota_period: --rounds needs a whole number >= 1" >&2; exit 2; }
kvdrive=${kvdrive:-${KV_BUILD_DIR:-$root/build}/driver/kvdrive}
[[ -x $kvdrive ]] || { echo "quota_period: no kvdrive at $kvdrive (build first)" >&2; exit 2; }
((EUID == 0)) || { echo "quota_period: needs root (a CPU cgroup)" >&2; exit 2; }
IFS=, read -r -a period_list <<<"$periods"
out=${out:-$root/bench/results/quota_period-$(date -u +%Y-%m-%dT%H%M).md}
# shellcheck source=../scripts/lib.sh
. "$root/scripts/lib.sh"
work=$(mktemp -d /tmp/quota-period.XXXXXX)
# One cgroup for the whole script; each run sets its period and quota before its store joins.
cg_base=/sys/fs/cgroup/cpu
[[ -f $cg_base/cgroup.procs ]] || cg_base=/sys/fs/cgroup
cg=$cg_base/kvbench-quota-$$
mkdir "$cg"
[[ -f $cg/cpu.cfs_quota_us ]] || echo "+cpu" >"$cg_base/cgroup.subtree_control" 2>/dev/null || true
redis_pid=""
stop_redis() {
  [[ -n $redis_pid ]] || return 0
  kill "$redis_pid" 2>/dev/null || true
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=""
}
cleanup() {  # also on a failed run and Ctrl-C: the store goes first, then its cgroup can
  stop_redis
  rmdir "$cg" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# one_run PERIOD_US N: sets `row` to "PERIOD N achieved1 .. achieved4 kvdrive_ops redis_calls".
# Runs in this shell, not in $(...), so the EXIT trap knows the store it started.
one_run() {
  local period=$1 n=$2 quota=$(($1 / 50)) port dir
  if [[ -f $cg/cpu.cfs_quota_us ]]; then
    # The quota first: a period longer than the old one under the old quota would be refused.
    echo -1 >"$cg/cpu.cfs_quota_us" && echo "$period" >"$cg/cpu.cfs_period_us" &&
      echo "$quota" >"$cg/cpu.cfs_quota_us"
  else
    echo "$quota $period" >"$cg/cpu.max"
  fi
  dir=$work/$period-$n && mkdir -p "$dir"
  port=$(kv_free_port)
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir" \
    >"$dir/redis.log" 2>&1 &
  redis_pid=$!
  echo "$redis_pid" >"$cg/cgroup.procs"
  kv_wait_port "$port" "$dir/redis.log"
  "$kvdrive" run --db "$dir/r.db" --target "redis://127.0.0.1:$port" --keys 1000 \
    --value-size 4K --threads 2 --connections 8 --search --slo p90=1s --min-achieved 0.9 \
    --duration 2s --warmup 1s --rates 2000,600,600,600 >"$dir/kvdrive.log" 2>&1 ||
    { echo "quota_period: kvdrive failed; its log:" >&2; tail -5 "$dir/kvdrive.log" >&2; exit 1; }
  # Every GET and SET kvdrive sent (the load phase and the warm-ups too) and Redis's own count.
  local steps ops calls
  steps=$(sqlite3 "$dir/r.db" "SELECT group_concat(CAST(round(achieved_rate) AS INT), ' ') FROM (SELECT achieved_rate FROM search_steps ORDER BY ordinal)")
  ops=$(sqlite3 "$dir/r.db" "SELECT sum(ops) FROM driver_seconds")
  calls=$(redis-cli -p "$port" info commandstats | tr -d '\r' |
          awk -F'[:=,]' '/^cmdstat_(get|set):/ {n += $3} END {print n + 0}')
  stop_redis
  row="$period $n $steps $ops $calls"
}

rows=()
for ((r = 1; r <= rounds; r++)); do
  for p in "${period_list[@]}"; do
    one_run "$p" "$r"
    echo "quota_period: $row" >&2
    rows+=("$row")
  done
done

{
  echo "# Redis at 2 % of a core: steadiness by quota period"
  echo
  echo "\`$command_line\` on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Steps: 2,000 req/s offered, then 600 three times (4 KiB values, 2 threads x 8 connections); a dip is a 600 step below 540."
  echo
  echo "| period | quota | runs | 600-steps | dips | lowest 600-step | step-1 achieved (min-max) |"
  echo "|---|---|---|---|---|---|---|"
  for p in "${period_list[@]}"; do
    printf '%s\n' "${rows[@]}" | awk -v p="$p" '$1 == p {
      runs++; s1 = $3; if (min1 == "" || s1 < min1) min1 = s1; if (s1 > max1) max1 = s1
      for (i = 4; i <= 6; i++) { n++; if ($i < 540) d++; if (low == "" || $i < low) low = $i }
    } END { printf "| %d ms | %.1f ms | %d | %d | %d | %d | %d-%d |\n", p / 1000, p / 50000, runs, n, d, low, min1, max1 }'
  done
  echo
  echo "Counts per run: kvdrive's requests (driver_seconds) and Redis's GET + SET calls (INFO commandstats):"
  echo
  echo "| period | run | achieved per step | kvdrive requests | Redis GET + SET |"
  echo "|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}" | awk '{ printf "| %d ms | %d | %s %s %s %s | %s | %s |\n", $1 / 1000, $2, $3, $4, $5, $6, $7, $8 }'
} >"$out"
echo "quota_period: wrote $out" >&2
cat "$out"
