#!/usr/bin/env bash
# One client thread holding many connections, each sending one request per second (open loop):
# the thread's CPU in the steady state, as a share of one core, for each kvdrive --io,
# --spin-budget and --pace-granularity, beside memtier_benchmark (one thread, --rate-limiting=1)
# when it is found. kvdrive's rows also give the median second's slip p50 (how late requests
# left: the pace step's wait is in it) from its results file.
# One redis-server (--maxclients above the count) on a free loopback port. kvdrive: --threads 1
# --connections N --rate N --phases read --duration D; its CPU (/proc/PID/stat utime+stime) is
# read from 2 s after the phase's first row to 2 s before its end, so connecting is left out.
# memtier: --threads=1 --clients=N --rate-limiting=1 --test-time=D, read over the same share of
# its run. Answered requests and errors come from kvdrive's results file and memtier's totals.
# Configurations alternate round by round. Needs redis-server, sqlite3; ulimit -Hn >= N+1000.
# Usage: bench/many_connections.sh [--connections 10000] [--duration 20] [--ios epoll,uring]
#          [--budgets 10%,0] [--steps 0] [--rounds 2] [--kvdrive PATH] [--memtier PATH|none]
#          [--out FILE]
#   --steps LIST   kvdrive --pace-granularity values, a row each (e.g. 0,200us,1ms,10ms)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
conns=10000 duration=20 ios=epoll,uring budgets=10%,0 steps=0 rounds=2 kvdrive="" memtier="" out=""
command_line="$0 $*"
while (($#)); do
  case $1 in
    --connections) conns=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --ios) ios=$2; shift 2 ;;
    --budgets) budgets=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    --memtier) memtier=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "many_connections: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
kvdrive=${kvdrive:-${KV_BUILD_DIR:-$root/build}/driver/kvdrive}
[[ -x $kvdrive ]] || { echo "many_connections: no kvdrive at '$kvdrive' (--kvdrive PATH)" >&2; exit 2; }
if [[ -z $memtier ]]; then
  memtier=$(command -v memtier_benchmark || true)
  [[ -z $memtier && -x /work/peers/memtier/bin/memtier_benchmark ]] &&
    memtier=/work/peers/memtier/bin/memtier_benchmark
fi
[[ $memtier == none ]] && memtier=""
((duration >= 8)) || { echo "many_connections: --duration must be at least 8 (s)" >&2; exit 2; }
for tool in redis-server sqlite3; do
  command -v "$tool" >/dev/null || { echo "many_connections: '$tool' is not installed" >&2; exit 2; }
done
need=$((conns + 1000))  # each process: its connections and the rest (redis-server's too)
ulimit -n "$need" 2>/dev/null || { echo "many_connections: cannot raise ulimit -n to $need" >&2; exit 2; }
source "$root/scripts/lib.sh"

work=$(mktemp -d /tmp/kv-manyconn.XXXXXX)
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

port=$(kv_free_port)
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --maxclients $((conns + 1000)) \
  --dir "$work" >"$work/redis.log" 2>&1 &
pids+=($!)
kv_wait_port "$port" "$work/redis.log"
"$kvdrive" run --db "$work/load.db" --target "redis://127.0.0.1:$port" --keys 10000 \
  --phases load --threads 2 --log-level error >/dev/null

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null || echo 0; }
# The CPU share of process $1 over [now + $2 s, now + $2 + $3 s]: printed as a percent of a core.
cpu_share() {
  sleep "$2"
  local a b
  a=$(cpu_ticks "$1")
  sleep "$3"
  b=$(cpu_ticks "$1")
  awk -v a="$a" -v b="$b" -v hz="$hz" -v s="$3" 'BEGIN { printf "%.1f", 100 * (b - a) / hz / s }'
}

rows=$work/rows.tsv  # config round cpu% answered/s errors slip
window=$((duration - 6))
kvdrive_run() { # io budget step round
  local db=$work/k-$1-$2-$3-$4.db pid share ok errs slip label
  "$kvdrive" run --db "$db" --target "redis://127.0.0.1:$port" --keys 10000 --phases read \
    --threads 1 --connections "$conns" --rate "$conns" --duration "${duration}s" --io "$1" \
    --spin-budget "$2" --pace-granularity "$3" --log-level error >"$work/k.log" 2>&1 &
  pid=$!
  for _ in $(seq 600); do  # the phase began (its connections made)
    [[ $(sqlite3 "$db" "SELECT count(*) FROM driver_seconds" 2>/dev/null || echo 0) -gt 0 ]] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  share=$(cpu_share "$pid" 2 "$window")
  wait "$pid" || { echo "many_connections: kvdrive failed: $(tail -3 "$work/k.log")" >&2; return 0; }
  ok=$(sqlite3 "$db" "SELECT SUM(ok) / (MAX(ts_us) - MIN(ts_us) + 1e6) * 1e6 FROM driver_seconds")
  errs=$(sqlite3 "$db" "SELECT SUM(errors + timeouts) FROM driver_seconds")
  slip=$(sqlite3 "$db" "SELECT printf('%.0f', slip_p50_us) FROM driver_seconds WHERE slip_p50_us IS NOT NULL
      ORDER BY slip_p50_us LIMIT 1 OFFSET (SELECT count(slip_p50_us) / 2 FROM driver_seconds)")
  label="kvdrive --io $1 --spin-budget $2"
  [[ $3 == 0 ]] || label+=" --pace-granularity $3"
  printf '%s\t%s\t%s\t%.0f\t%s\t%s\n' "$label" "$4" "$share" "$ok" "$errs" "$slip" >>"$rows"
}
memtier_run() { # round
  local pid share
  "$memtier" -s 127.0.0.1 -p "$port" --protocol=redis --threads=1 --clients="$conns" \
    --rate-limiting=1 --test-time="$duration" --ratio=0:1 --key-pattern=R:R --key-prefix=kv: \
    --key-minimum=1 --key-maximum=9999 --hide-histogram >"$work/m.log" 2>&1 &
  pid=$!
  share=$(cpu_share "$pid" 4 "$window")
  wait "$pid" || { echo "many_connections: memtier failed: $(tail -3 "$work/m.log")" >&2; return 0; }
  local line
  line=$(awk '$1 == "Totals" { print $2 }' "$work/m.log" | tail -1)
  printf 'memtier --rate-limiting=1\t%s\t%s\t%.0f\t-\t-\n' "$1" "$share" "${line:-0}" >>"$rows"
}

t0=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq "$rounds"); do
  for io in ${ios//,/ }; do
    for b in ${budgets//,/ }; do
      for st in ${steps//,/ }; do
        echo "many_connections: round $r, --io $io --spin-budget $b --pace-granularity $st" >&2
        kvdrive_run "$io" "$b" "$st" "$r"
      done
    done
  done
  if [[ -n $memtier ]]; then
    echo "many_connections: round $r, memtier" >&2
    memtier_run "$r"
  fi
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

out=${out:-$root/bench/results/many_connections-$(date +%Y-%m-%dT%H%M).md}
{
  echo "# One thread, $conns connections, 1 request/s each — $(date '+%Y-%m-%d %H:%M %Z')"
  echo
  echo "- Command: \`${command_line% }\` ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "- Machine: $(nproc) cores, $(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo), kernel $(uname -r); load average at start $load_start, at end $load_end; whole run $(($(date +%s) - t0)) s"
  echo "- $(redis-server --version | awk '{ print $1, $2, $3 }') --maxclients $((conns + 1000)); kvdrive $kvdrive; memtier ${memtier:-not found}"
  echo "- CPU: the client process's utime+stime over ${window} s of the steady state, % of one core"
  echo
  echo "- Slip: the median over the phase's seconds of kvdrive's per-second slip p50 (how late a request left its intended time; the first seconds, while connections open, are late), µs"
  echo
  echo "| client | round | CPU % of a core | answered/s | errors + timeouts | slip p50 µs |"
  echo "|---|---:|---:|---:|---:|---:|"
  sort -s -t$'\t' -k1,1 "$rows" | awk -F'\t' '{ printf "| %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, $5, $6 }'
} >"$out"
cat "$out"
