#!/usr/bin/env bash
# The main job, end to end on one machine: installs what is missing, builds kvmon and kvdrive,
# starts Redis and memcached on free loopback ports with kvmon watching both, benchmarks them
# with kvdrive into one SQLite file, and prints the report. Stops everything it started, also
# on Ctrl-C. Usage: scripts/demo.sh [--keys N] [--value-size SIZE] [--threads N] [--out DIR]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keys=200k value_size=100 threads=4 out="$root/results"
while (($#)); do
  case "$1" in
    --keys) keys=$2; shift 2 ;;
    --value-size) value_size=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,5p' "$0"; exit 0 ;;
    *) echo "demo: unknown argument '$1'" >&2; exit 2 ;;
  esac
done

"$root/packaging/install-deps.sh"
"$root/scripts/build.sh" -- kvmon kvdrive
bin=${KV_BUILD_DIR:-$root/build}
kvmon=$bin/monitor/kvmon
kvdrive=$bin/driver/kvdrive

mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/kvbench-demo-XXXXXX")
db="$out/results.db"
pids=()
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$root/scripts/lib.sh"

redis_port=$(kv_free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work" --save "" --appendonly no \
  --daemonize no >"$work/redis.log" 2>&1 &
pids+=($!)
redis_pid=$!
memcached_port=$(kv_free_port)
memcached_user=()
[[ $(id -u) -eq 0 ]] && memcached_user=(-u root)
memcached -p "$memcached_port" -l 127.0.0.1 -U 0 -m 1024 "${memcached_user[@]}" >"$work/memcached.log" 2>&1 &
pids+=($!)
memcached_pid=$!
kv_wait_port "$redis_port" "$work/redis.log"
kv_wait_port "$memcached_port" "$work/memcached.log"
echo "demo: redis-server on 127.0.0.1:$redis_port (pid $redis_pid), memcached on 127.0.0.1:$memcached_port (pid $memcached_pid)"

"$kvmon" --db "$db" --pid "$redis_pid" --pid "$memcached_pid" --interval 250ms 2>"$work/kvmon.log" &
kvmon_pid=$!
pids=("$kvmon_pid" "${pids[@]}")  # stopped first, so it sees the servers until the end
sleep 1.5

# The run's own summary goes to a file: the report is printed once kvmon has stored its last
# samples (it commits every few ticks; SIGTERM stores the rest).
"$kvdrive" run --db "$db" --name demo \
  --target "redis://127.0.0.1:$redis_port" --target "memcached://127.0.0.1:$memcached_port" \
  --keys "$keys" --value-size "$value_size" --threads "$threads" >"$work/run.txt"
sleep 1.2  # one more monitor sample after the last request
kill -TERM "$kvmon_pid"
wait "$kvmon_pid" || { echo "demo: kvmon failed:" >&2; cat "$work/kvmon.log" >&2; exit 1; }
run_id=$(sqlite3 "$db" "SELECT max(run_id) FROM runs")
"$kvdrive" report --db "$db" --run "$run_id"

echo
echo "kvmon samples of the stores during the run (from $db):"
sqlite3 -header -column "$db" "
  SELECT i.name AS process, i.pid, count(*) AS samples,
         max(s.rss_kib) / 1024 AS peak_rss_mib,
         (max(s.cpu_user_us) - min(s.cpu_user_us) + max(s.cpu_system_us) - min(s.cpu_system_us)) / 1e6
           AS cpu_s
  FROM process_samples s JOIN process_instances i USING (instance_id)
  WHERE s.ts_us BETWEEN (SELECT started_ts_us FROM runs ORDER BY run_id DESC LIMIT 1)
                    AND (SELECT ended_ts_us FROM runs ORDER BY run_id DESC LIMIT 1)
  GROUP BY i.instance_id ORDER BY i.pid;"
echo
echo "results: $db   (try: sqlite3 $db < $root/schema/queries/store_summary.sql)"
