#!/usr/bin/env bash
# kvmon under client load (issue 7, "Load"): a redis-server sampled at 10 Hz by kvmon --listen on
# loopback, with --clients clients subscribed, --stuck of them never reading. Measures:
#   - sampling jitter, ts_us - scheduled_ts_us of kvmon's own process_samples (p50/p99/max, µs);
#   - kvmon's VmRSS every second (first, max, last);
#   - that every stuck client is dropped (events rows of kind client_dropped) and that every
#     reading client is still connected at the end (kvmon's established sockets).
# A reading client is bash's /dev/tcp and `cat`; a stuck one is bench/kvmon_stuck_client (built
# with the project: ninja kvmon kvmon_stuck_client).
#
# Usage: bench/kvmon_clients.sh [--duration S] [--clients N] [--stuck N] [--kvmon PATH]
#   --duration S   seconds of load (default 60)
#   --clients N    clients subscribed (default 100)
#   --stuck N      of which never read (default 10)
#   --kvmon PATH   the kvmon binary (default $KV_BUILD_DIR or build/, then monitor/kvmon)
# kvmon runs with --client-queue 64KiB --idle-timeout 10s so stuck clients fill up in seconds.
# Exit status 1 if a stuck client was not dropped or a reading client was.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
duration=60 clients=100 stuck=10 kvmon=""
while (($#)); do
  case $1 in
    --duration) duration=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --stuck) stuck=$2; shift 2 ;;
    --kvmon) kvmon=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "kvmon_clients: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for v in duration clients stuck; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "kvmon_clients: --$v must be a whole number" >&2; exit 2; }
done
((stuck <= clients && duration >= 5)) ||
  { echo "kvmon_clients: need --stuck <= --clients and --duration >= 5" >&2; exit 2; }
[[ -n "$kvmon" ]] || kvmon=${KV_BUILD_DIR:-$root/build}/monitor/kvmon
stuck_client=$(dirname "$(dirname "$kvmon")")/bench/kvmon_stuck_client
for prog in "$kvmon" "$stuck_client" redis-server sqlite3 awk; do
  command -v "$prog" >/dev/null || { echo "kvmon_clients: missing $prog" >&2; exit 2; }
done

source "$root/scripts/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/kvmon-clients-XXXXXX")
pids=()
kv_stop_on_exit kvmon_clients "$work" "$([[ -n ${KV_KEEP:-} ]] && echo 1 || echo 0)"

kv_start_redis "$work"

kvmon_port=$(kv_free_port)
db="$work/kvmon.db"
"$kvmon" --db "$db" --pid "$redis_pid" --interval 100ms --listen "127.0.0.1:$kvmon_port" \
  --max-clients $((clients + 10)) --client-queue 64KiB --idle-timeout 10s --log-level warn \
  2>"$work/kvmon.log" &
kpid=$!
pids+=("$kpid")
kv_wait_port "$kvmon_port" "$work/kvmon.log"

# A reading client: connect, hello, subscribe, read everything. The stuck ones are
# bench/kvmon_stuck_client (a 4 KiB receive buffer: bash's would autotune to megabytes).
client() {
  exec 3<>"/dev/tcp/127.0.0.1/$kvmon_port"
  printf 'hello v=1\nsubscribe\n' >&3
  exec cat <&3 >/dev/null
}
t0=$(date +%s%6N)
for ((i = 0; i < clients; i++)); do
  if ((i < stuck)); then "$stuck_client" "$kvmon_port" $((duration + 60)) & else client & fi
  pids+=("$!")
done

rss=()
for ((s = 0; s < duration; s++)); do
  sleep 1
  rss+=("$(awk '/^VmRSS:/ {print $2}' "/proc/$kpid/status")")
done
t1=$(date +%s%6N)
# kvmon's established connections (its listening socket excluded).
connected=$(ls -l "/proc/$kpid/fd" 2>/dev/null | grep -c 'socket:' || true)
connected=$((connected - 1))
kill -TERM "$kpid"
wait "$kpid" || { echo "kvmon_clients: kvmon failed:" >&2; cat "$work/kvmon.log" >&2; exit 1; }

read -r p50 p99 pmax n < <(sqlite3 -separator ' ' "$db" "
  WITH j AS (SELECT ts_us - scheduled_ts_us AS d FROM process_samples
             WHERE scheduled_ts_us >= $t0 AND scheduled_ts_us < $t1),
       n AS (SELECT COUNT(*) AS c FROM j)
  SELECT (SELECT d FROM j ORDER BY d LIMIT 1 OFFSET (SELECT (c - 1) / 2 FROM n)),
         (SELECT d FROM j ORDER BY d LIMIT 1 OFFSET (SELECT CAST((c - 1) * 0.99 AS INTEGER) FROM n)),
         (SELECT MAX(d) FROM j), (SELECT c FROM n)")
dropped=$(sqlite3 "$db" "SELECT COUNT(*) FROM events WHERE kind = 'client_dropped'")
first_drop_s=$(sqlite3 "$db" "SELECT COALESCE((MIN(ts_us) - $t0) / 1000000.0, -1) FROM events
                              WHERE kind = 'client_dropped'")
last_drop_s=$(sqlite3 "$db" "SELECT COALESCE((MAX(ts_us) - $t0) / 1000000.0, -1) FROM events
                             WHERE kind = 'client_dropped'")
skipped=$(sqlite3 "$db" "SELECT COUNT(*) FROM events WHERE kind IN ('samples_dropped','ticks_skipped')")
rss_first=${rss[0]} rss_last=${rss[-1]}
rss_max=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)

echo "kvmon_clients: $(date -u +%FT%TZ), $(nproc) CPUs, kvmon $("$kvmon" --version | awk '{print $2}')"
echo "  $clients clients subscribed at 10 Hz for ${duration} s, $stuck never reading"
echo "  ticks sampled: $n (expected ~$((duration * 10))); skipped/dropped-sample events: $skipped"
echo "  jitter ts_us - scheduled_ts_us: p50 ${p50} us, p99 ${p99} us, max ${pmax} us"
echo "  kvmon VmRSS: ${rss_first} KiB after 1 s, max ${rss_max} KiB, ${rss_last} KiB at the end"
echo "  client_dropped events: $dropped (first after ${first_drop_s} s, last after ${last_drop_s} s)"
echo "  clients still connected at the end: $connected (expected $((clients - stuck)))"
echo "  RSS every second (KiB): ${rss[*]}"
status=0
((dropped == stuck)) || { echo "kvmon_clients: FAIL: $dropped of $stuck stuck clients dropped" >&2; status=1; }
((connected == clients - stuck)) ||
  { echo "kvmon_clients: FAIL: $connected clients connected, expected $((clients - stuck))" >&2; status=1; }
exit "$status"
