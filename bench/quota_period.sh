#!/usr/bin/env bash
# How steady a Redis held to a small share of a CPU is, by how it is held: the capacity search's
# knee test (tests/driver/integration/search_integration_test.cpp) needs a store whose capacity
# holds from step to step. Methods (alternating, round by round, so a shared machine's drift hits
# them alike):
#   PERIOD (µs)  a fresh CPU cgroup with quota = 2 % of PERIOD; steps at 2,000 then 600 req/s
#   shared       redis-server at nice 19 pinned to the last CPU beside a spinning shell (CFS
#                weight 15 against 1,024), kvdrive on the other CPUs (measured as a way to
#                hold the knee test's store, not used: docs/capacity-search.md); steps at 2,000
#                then --shared-rate req/s
# Each run is `kvdrive run --search --rates 2000,R,R,R` (one step far past the knee, then three
# below it, 4 KiB values on 16 connections, as the test) on each engine asked for (--engines;
# methods and engines alternate, round by round), and records each step's achieved
# rate. A "dip" is a step at R that achieved less than 90 % of it. It also sets kvdrive's request
# count beside Redis's own GET and SET calls (INFO commandstats), so a dip is seen to be the
# store's, not the client's counting.
#
# Usage: bench/quota_period.sh [--rounds N] [--methods LIST] [--engines LIST] [--shared-rate R]
#                              [--pin LIST] [--kvdrive PATH] [--out FILE]
#   --rounds N       runs per method (default 10)
#   --methods LIST   comma-separated periods in µs and/or "shared" (default 200000,shared);
#                    --periods is the same option
#   --engines LIST   the engine of each run: events, classic or both (default events; classic
#                    only with a kvdrive built before 2026-12-03, which had --engine: today's has
#                    none, and is given it only for classic)
#   --pin LIST       under a quota, where the store and kvdrive run, each in turn: none (default;
#                    the scheduler places both), same (both on the last CPU) or apart (the store
#                    on the last CPU, kvdrive on the others)
#   --shared-rate R  the below-knee rate of the shared method (default 600)
#   --kvdrive PATH   default $KV_BUILD_DIR/driver/kvdrive, else build/driver/kvdrive
#   --out FILE       markdown report (default bench/results/quota_period-<date>.md)
# Needs root (cgroups, nice 19, affinity), a cgroup v1 cpu or v2 cpu controller for a period,
# two CPUs for "shared". About 16 s per run; "shared" keeps one CPU busy while it runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rounds=10 methods=200000,shared engines=events pins=none shared_rate=600 quota_rate=600 kvdrive="" out=""
command_line="$0 $*"
while (($#)); do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --methods|--periods) methods=$2; shift 2 ;;
    --engines) engines=$2; shift 2 ;;
    --pin) pins=$2; shift 2 ;;
    --shared-rate) shared_rate=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,32p' "$0"; exit 0 ;;
    *) echo "quota_period: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[0-9]+$ ]] && ((rounds >= 1)) ||
  { echo "quota_period: --rounds needs a whole number >= 1" >&2; exit 2; }
kvdrive=${kvdrive:-${KV_BUILD_DIR:-$root/build}/driver/kvdrive}
[[ -x $kvdrive ]] || { echo "quota_period: no kvdrive at $kvdrive (build first)" >&2; exit 2; }
((EUID == 0)) || { echo "quota_period: needs root (a CPU cgroup)" >&2; exit 2; }
[[ $shared_rate =~ ^[0-9]+$ ]] && ((shared_rate >= 10)) ||
  { echo "quota_period: --shared-rate needs a whole number of req/s >= 10" >&2; exit 2; }
IFS=, read -r -a method_list <<<"$methods"
for m in "${method_list[@]}"; do
  [[ $m == shared || ($m =~ ^[0-9]+$ && m -ge 1000) ]] ||
    { echo "quota_period: --methods: '$m' is neither a period in µs (>= 1000) nor 'shared'" >&2; exit 2; }
done
IFS=, read -r -a engine_list <<<"$engines"
for e in "${engine_list[@]}"; do
  [[ $e == events || $e == classic ]] ||
    { echo "quota_period: --engines: '$e' is neither events nor classic" >&2; exit 2; }
done
IFS=, read -r -a pin_list <<<"$pins"
for p in "${pin_list[@]}"; do
  [[ $p == none || $p == same || $p == apart ]] ||
    { echo "quota_period: --pin: '$p' is none, same or apart" >&2; exit 2; }
done
# "shared": the store and the spinner on the last CPU, kvdrive on the others (CPUs 0..N-1).
ncpu=$(nproc)
if [[ ,$methods, == *,shared,* || ,$pins, == *,apart,* ]]; then
  ((ncpu >= 2)) || { echo "quota_period: 'shared' needs two CPUs" >&2; exit 2; }
fi
shared_cpu=$((ncpu - 1)) other_cpus=0-$((ncpu > 1 ? ncpu - 2 : 0))
out=${out:-$root/bench/results/quota_period-$(date -u +%Y-%m-%dT%H%M).md}
# shellcheck source=../scripts/lib.sh
. "$root/scripts/lib.sh"
work=$(mktemp -d /tmp/quota-period.XXXXXX)
# One cgroup for the whole script; each run sets its period and quota before its store joins.
cg_base=/sys/fs/cgroup/cpu
[[ -f $cg_base/cgroup.procs ]] || cg_base=/sys/fs/cgroup
cg=$cg_base/kvbench-quota-$$
if [[ ,$methods, == *,[0-9]* ]]; then
  mkdir "$cg"
  [[ -f $cg/cpu.cfs_quota_us ]] || echo "+cpu" >"$cg_base/cgroup.subtree_control" 2>/dev/null || true
fi
redis_pid="" spinner_pid=""
stop_redis() {
  local p
  for p in $redis_pid $spinner_pid; do
    kill "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  redis_pid="" spinner_pid=""
}
cleanup() {  # also on a failed run and Ctrl-C: the store goes first, then its cgroup can
  stop_redis
  rmdir "$cg" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# one_run METHOD ENGINE PIN N: sets `row` to "METHOD ENGINE PIN N achieved1 .. achieved4
# kvdrive_ops redis_calls" (PIN is "-" for shared). Runs in this shell, not in $(...), so the
# EXIT trap knows the store it started.
one_run() {
  local method=$1 engine=$2 pin_mode=$3 n=$4 port dir rate pin=()
  dir=$work/$method-$engine-$pin_mode-$n && mkdir -p "$dir"
  port=$(kv_free_port)
  local redis=(redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$dir")
  if [[ $method == shared ]]; then
    rate=$shared_rate pin=(taskset -c "$other_cpus")
    taskset -c "$shared_cpu" sh -c 'while :; do :; done' &
    spinner_pid=$!
    taskset -c "$shared_cpu" nice -n 19 "${redis[@]}" >"$dir/redis.log" 2>&1 &
    redis_pid=$!
  else
    rate=$quota_rate
    if [[ -f $cg/cpu.cfs_quota_us ]]; then
      # The quota first: a period longer than the old one under the old quota would be refused.
      echo -1 >"$cg/cpu.cfs_quota_us" && echo "$method" >"$cg/cpu.cfs_period_us" &&
        echo "$((method / 50))" >"$cg/cpu.cfs_quota_us"
    else
      echo "$((method / 50)) $method" >"$cg/cpu.max"
    fi
    local store_pin=()
    case $pin_mode in
      same) store_pin=(taskset -c "$shared_cpu") pin=(taskset -c "$shared_cpu") ;;
      apart) store_pin=(taskset -c "$shared_cpu") pin=(taskset -c "$other_cpus") ;;
    esac
    "${store_pin[@]}" "${redis[@]}" >"$dir/redis.log" 2>&1 &
    redis_pid=$!
    echo "$redis_pid" >"$cg/cgroup.procs"
  fi
  kv_wait_port "$port" "$dir/redis.log"
  local engine_args=()
  [[ $engine == events ]] || engine_args=(--engine "$engine")
  "${pin[@]}" "$kvdrive" run "${engine_args[@]}" --db "$dir/r.db" --target "redis://127.0.0.1:$port" --keys 1000 \
    --value-size 4K --threads 2 --connections 8 --search --slo p90=1s --min-achieved 0.9 \
    --duration 2s --warmup 1s --rates "2000,$rate,$rate,$rate" >"$dir/kvdrive.log" 2>&1 ||
    { echo "quota_period: kvdrive failed; its log:" >&2; tail -5 "$dir/kvdrive.log" >&2; exit 1; }
  # Every GET and SET kvdrive sent (the load phase and the warm-ups too) and Redis's own count.
  local steps ops calls
  steps=$(sqlite3 "$dir/r.db" "SELECT group_concat(CAST(round(achieved_rate) AS INT), ' ') FROM (SELECT achieved_rate FROM search_steps ORDER BY ordinal)")
  ops=$(sqlite3 "$dir/r.db" "SELECT sum(ops) FROM driver_seconds")
  calls=$(redis-cli -p "$port" info commandstats | tr -d '\r' |
          awk -F'[:=,]' '/^cmdstat_(get|set):/ {n += $3} END {print n + 0}')
  stop_redis
  row="$method $engine $pin_mode $n $steps $ops $calls"
}

rows=()
for ((r = 1; r <= rounds; r++)); do
  for m in "${method_list[@]}"; do
    for e in "${engine_list[@]}"; do
      ps=("${pin_list[@]}")
      [[ $m == shared ]] && ps=(-)
      for p in "${ps[@]}"; do
        one_run "$m" "$e" "$p" "$r"
        echo "quota_period: $row" >&2
        rows+=("$row")
      done
    done
  done
done

{
  echo "# Redis at a small share of a CPU: steadiness by how it is held"
  echo
  echo "\`$command_line\` on $(hostname), $(date -u +%Y-%m-%dT%H:%MZ), load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)."
  echo "Steps: 2,000 req/s offered, then R three times (4 KiB values, 2 threads x 8 connections): R = $quota_rate under a quota of 2 % of a core, $shared_rate on the shared CPU (nice 19 beside a spinner). A dip is an R step below 0.9 R. --pin: same = the store and kvdrive on the last CPU, apart = the store there and kvdrive on the others, none = wherever the scheduler puts them."
  echo
  echo "| method | runs | R-steps | dips | lowest R-step | step-1 achieved (min-max) |"
  echo "|---|---|---|---|---|---|"
  for m in "${method_list[@]}"; do
    for e in "${engine_list[@]}"; do
      ps=("${pin_list[@]}")
      [[ $m == shared ]] && ps=(-)
      for p in "${ps[@]}"; do
        printf '%s\n' "${rows[@]}" | awk -v m="$m" -v e="$e" -v p="$p" -v sr="$shared_rate" -v qr="$quota_rate" '$1 == m && $2 == e && $3 == p {
          runs++; s1 = $5; if (min1 == "" || s1 < min1) min1 = s1; if (s1 > max1) max1 = s1
          r = (m == "shared") ? sr : qr
          for (i = 6; i <= 8; i++) { n++; if ($i < 0.9 * r) d++; if (low == "" || $i < low) low = $i }
        } END {
          name = (m == "shared") ? "shared CPU, nice 19, R " sr : sprintf("quota %.1f ms per %d ms, R %d, --pin %s", m / 50000, m / 1000, qr, p)
          printf "| %s, --engine %s | %d | %d | %d | %d | %d-%d |\n", name, e, runs, n, d, low, min1, max1 }'
      done
    done
  done
  echo
  echo "Counts per run: kvdrive's requests (driver_seconds) and Redis's GET + SET calls (INFO commandstats):"
  echo
  echo "| method | engine | pin | run | achieved per step | kvdrive requests | Redis GET + SET |"
  echo "|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}" | awk '{ m = ($1 == "shared") ? "shared" : sprintf("%d ms", $1 / 1000)
    printf "| %s | %s | %s | %d | %s %s %s %s | %s | %s |\n", m, $2, $3, $4, $5, $6, $7, $8, $9, $10 }'
} >"$out"
echo "quota_period: wrote $out" >&2
cat "$out"
