#!/usr/bin/env bash
# What open-loop pacing costs: kvdrive's CPU per second and per request at fixed rates of one
# worker thread, for several --spin-budget values, beside a closed-loop run of the same thread,
# with the slip (client_send part) each budget leaves. One redis-server on a free loopback port;
# kvdrive --threads 1 --connections 1, a read phase per configuration, alternated round by
# round; redis-server on the first CPU, kvdrive on the last. --busy N adds N busy loops, the
# loaded host where the spin margin grows: on kvdrive's CPU, or with --pin no anywhere (nothing
# pinned: the scheduler shares both CPUs among kvdrive, redis-server and the loops).
# Needs redis-server, sqlite3, taskset.
# Usage: bench/pacing_cpu.sh [--rates 1000,5000,20000] [--budgets 0,10%,100%] [--duration 5s]
#                            [--rounds 3] [--busy N] [--pin yes|no] [--kvdrive PATH]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rates=1000,5000,20000 budgets=0,10%,100% duration=5s rounds=3 busy=0 pin=yes kvdrive=
while (($#)); do
  case $1 in
    --rates) rates=$2; shift 2 ;;
    --budgets) budgets=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --busy) busy=$2; shift 2 ;;
    --pin) pin=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    -h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "pacing_cpu: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
kvdrive=${kvdrive:-${KV_BUILD_DIR:-$root/build}/driver/kvdrive}
[[ -x $kvdrive ]] || { echo "pacing_cpu: no kvdrive at '$kvdrive' (build it, or --kvdrive PATH)" >&2; exit 2; }
for tool in redis-server sqlite3 taskset; do
  command -v "$tool" >/dev/null || { echo "pacing_cpu: '$tool' is not installed" >&2; exit 2; }
done
source "$root/scripts/lib.sh"

work=$(mktemp -d /tmp/kv-pacing.XXXXXX)
pids=()
cleanup() {
  local status=$?
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[[ $pin == yes || $pin == no ]] || { echo "pacing_cpu: --pin takes yes or no" >&2; exit 2; }
last_cpu=$(($(nproc) - 1))
first=(taskset -c 0) last=(taskset -c "$last_cpu")
[[ $pin == yes ]] || first=() last=()
port=$(kv_free_port)
"${first[@]}" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
kv_wait_port "$port" "$work/redis.log"
for ((i = 0; i < busy; i++)); do
  "${last[@]}" sh -c 'while :; do :; done' &
  pids+=($!)
done
db=$work/r.db
drive() {  # drive NAME ARGS...: one read phase, its phase id named NAME
  local name=$1; shift
  "${last[@]}" "$kvdrive" --log-level warn run --db "$db" --name "$name" \
    --target "redis://127.0.0.1:$port" --phases read --keys 1000 --threads 1 --connections 1 \
    "$@" >>"$work/kvdrive.log" 2>&1 || { cat "$work/kvdrive.log" >&2; exit 1; }
}
IFS=, read -r -a rate_list <<<"$rates"
IFS=, read -r -a budget_list <<<"$budgets"
"$kvdrive" --log-level warn run --db "$work/load.db" --target "redis://127.0.0.1:$port" \
  --phases load --keys 1000 --threads 1 >/dev/null
for ((round = 1; round <= rounds; round++)); do
  for r in "${rate_list[@]}"; do
    for b in "${budget_list[@]}"; do drive "rate=$r budget=$b" --rate "$r" --spin-budget "$b" --duration "$duration"; done
  done
  drive "closed loop" --requests 200000
done

# Medians over the rounds of each configuration's per-phase figures.
sqlite3 "$db" >"$work/rows.txt" <<'SQL'
.mode tabs
WITH per_phase AS (
  SELECT r.name AS name, p.phase_id,
         (SELECT SUM(c.cpu_user_us + c.cpu_system_us) FROM client_seconds c
           WHERE c.phase_id = p.phase_id) AS cpu_us,
         (SELECT SUM(c.spin_us) FROM client_seconds c WHERE c.phase_id = p.phase_id) AS spin_us,
         (p.ended_ts_us - p.started_ts_us) / 1e6 AS seconds,
         (SELECT SUM(d.ops) FROM driver_seconds d WHERE d.phase_id = p.phase_id) AS ops,
         (SELECT p50_us FROM phase_part_percentiles q WHERE q.phase_id = p.phase_id
           AND q.part = 'client_send') AS slip50,
         (SELECT p99_us FROM phase_part_percentiles q WHERE q.phase_id = p.phase_id
           AND q.part = 'client_send') AS slip99
  FROM phases p JOIN runs r USING (run_id))
SELECT name, ops / seconds, cpu_us / 1e3 / seconds, COALESCE(spin_us, 0) / 1e3 / seconds,
       cpu_us * 1.0 / ops, COALESCE(slip50, -1), COALESCE(slip99, -1)
FROM per_phase ORDER BY phase_id;
SQL
echo "kvdrive --threads 1 --connections 1, read phase, $duration per rate, $rounds rounds (medians)," \
  "redis-server $(redis-server --version | awk '{print $3}'), $busy busy loop(s)," \
  "$([[ $pin == yes ]] && echo "redis-server on CPU 0, kvdrive and the loops on CPU $last_cpu" || echo "nothing pinned")," \
  "$(nproc) CPUs, $(uname -r)"
printf '%-26s %10s %10s %10s %10s %12s %12s\n' configuration "req/s" "CPU ms/s" "spin ms/s" \
  "CPU us/req" "slip p50 us" "slip p99 us"
awk -F'\t' '
  { n[$1]++; for (i = 2; i <= 7; i++) v[$1, i, n[$1]] = $i; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
  function median(name, col,   m, a, i, j, t) {
    m = n[name]; for (i = 1; i <= m; i++) a[i] = v[name, col, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
  }
  END {
    for (o = 1; o <= k; o++) {
      name = order[o]
      s50 = median(name, 6); s99 = median(name, 7)
      printf "%-26s %10.0f %10.1f %10.1f %10.2f %12s %12s\n", name, median(name, 2), median(name, 3),
        median(name, 4), median(name, 5), (name == "closed loop" ? "-" : sprintf("%.1f", s50)),
        (name == "closed loop" ? "-" : sprintf("%.1f", s99))
    }
  }' "$work/rows.txt"
echo "CPU: the whole kvdrive process (workers, collector, results writer) from client_seconds;"
echo "spin: the worker's wall time spinning for send times; slip: the client_send part (sent - due)."
