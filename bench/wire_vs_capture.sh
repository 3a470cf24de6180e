#!/usr/bin/env bash
# kvdrive's wire part (sent -> the kernel's receive stamp of the reply; schema/README.md "Whose
# time is it") beside a packet capture of the same requests on loopback: tcpdump's request ->
# reply time per request of kvdrive's one connection, p50 and p90 of both. Two runs: the wire
# from the send call's start (--wire-start call, the default) and from the kernel's transmit
# stamp (--wire-start kernel).
# One redis-server on a free loopback port, kvdrive at a light open-loop rate (--rate 2000
# --threads 1 --connections 1: one request in flight at a time, so request and reply alternate
# on the wire). Needs redis-server, tcpdump, sqlite3; root (tcpdump on lo).
# Then what the kernel's stamps cost (--rounds, default 3, alternated): kvdrive's CPU per request
# and its rate, closed loop (one thread, 2 connections, --pipeline 1 and 16) and at --rate 20000,
# each mode in turn, medians; --rounds 0 leaves it out.
# Usage: bench/wire_vs_capture.sh [--rate R] [--duration D] [--rounds N] [--kvdrive PATH]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rate=2000 duration=10s rounds=3 kvdrive=
while (($#)); do
  case $1 in
    --rate) rate=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "wire_vs_capture: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
kvdrive=${kvdrive:-${KV_BUILD_DIR:-$root/build}/driver/kvdrive}
[[ -x $kvdrive ]] || { echo "wire_vs_capture: no kvdrive at '$kvdrive' (build it, or --kvdrive PATH)" >&2; exit 2; }
for tool in redis-server tcpdump sqlite3; do
  command -v "$tool" >/dev/null || { echo "wire_vs_capture: '$tool' is not installed" >&2; exit 2; }
done
source "$root/scripts/lib.sh"

work=$(mktemp -d /tmp/kv-wire.XXXXXX)
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
redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  >"$work/redis.log" 2>&1 &
pids+=($!)
kv_wait_port "$port" "$work/redis.log"
# One kvdrive run per wire start (--wire-start call, then kernel), each with its own capture.
measure() {  # $1: call | kernel
  local w=$1
  tcpdump -i lo -nn -s 96 -w "$work/$w.pcap" "tcp port $port" 2>"$work/tcpdump-$w.log" &
  local cap=$!
  pids+=("$cap")
  sleep 1  # tcpdump's capture is open once it printed "listening"; give it the second
  "$kvdrive" --log-level warn run --db "$work/$w.db" --target "redis://127.0.0.1:$port" \
    --phases read --keys 1000 --rate "$rate" --threads 1 --connections 1 --duration "$duration" \
    --wire-start "$w" >"$work/kvdrive-$w.log" 2>&1
  sleep 0.5
  kill "$cap"; wait "$cap" 2>/dev/null || true

  # The capture: request -> reply per client port, a request being a packet with payload to
  # the server and its reply the next packet with payload from it. The connection with the most
  # exchanges is the read phase's (the others are the settings and stats connections).
  tcpdump -tt -nn -r "$work/$w.pcap" 2>/dev/null | awk -v port="$port" '
    $2 == "IP" && $NF != "0" {
      src = $3; dst = $5; sub(":$", "", dst)
      n = split(src, s, "."); sport = s[n]; m = split(dst, d, "."); dport = d[m]
      if (dport == port) { req[sport] = $1 }
      else if (sport == port && (dport in req)) {
        printf "%s %.3f\n", dport, ($1 - req[dport]) * 1e6; delete req[dport]
      }
    }' >"$work/deltas.txt"
  local conn
  conn=$(awk '{ c[$1]++ } END { for (k in c) if (c[k] > best) { best = c[k]; p = k }; print p }' "$work/deltas.txt")
  awk -v c="$conn" '$1 == c { print $2 }' "$work/deltas.txt" | sort -n >"$work/conn.txt"
  count=$(wc -l <"$work/conn.txt")
  q() { sqlite3 "$work/$w.db" "$1"; }
  echo
  echo "--wire-start $w: capture of $count request -> reply exchanges on the read connection"
  printf '%-28s %10s %10s\n' "" "p50 us" "p90 us"
  printf '%-28s %10s %10s\n' "capture request -> reply" "$(pct 0.5)" "$(pct 0.9)"
  for part in wire client_send client_recv; do
    printf '%-28s %10s %10s\n' "kvdrive $part" \
      "$(q "SELECT round(p50_us, 1) FROM phase_part_percentiles WHERE part = '$part' AND op = 'get'")" \
      "$(q "SELECT round(p90_us, 1) FROM phase_part_percentiles WHERE part = '$part' AND op = 'get'")"
  done
  printf '%-28s %10s %10s\n' "kvdrive latency (intended)" \
    "$(q "SELECT round(p50_us, 1) FROM phase_percentiles WHERE timing = 'intended' AND op = 'get'")" \
    "$(q "SELECT round(p90_us, 1) FROM phase_percentiles WHERE timing = 'intended' AND op = 'get'")"
}
pct() { awk -v q="$1" -v n="$count" 'NR == int(q * n + 0.999999) { print; exit }' "$work/conn.txt"; }

echo "kvdrive --rate $rate --threads 1 --connections 1 --duration $duration, redis-server $(redis-server --version | awk '{print $3}'), $(uname -r)"
measure call
measure kernel
echo "kvdrive's buckets are HdrHistogram-like (their upper bound, within 0.8 %); the capture's are exact."

# The cost: CPU (user + system, of the whole process, from /usr/bin/time's view of getrusage)
# per answered request, and requests/s, per configuration and wire start; medians of the rounds.
((rounds > 0)) || exit 0
cost() {  # $1 label, $2 wire start, rest: kvdrive's load options
  local label=$1 w=$2; shift 2
  rm -f "$work/c.db"
  local t0 t1 cpu0 cpu1
  t0=$(date +%s.%N)
  "$kvdrive" --log-level warn run --db "$work/c.db" --target "redis://127.0.0.1:$port" \
    --phases read --keys 1000 --threads 1 --connections 2 --duration 4s --wire-start "$w" "$@" \
    >/dev/null 2>&1 &
  local pid=$!
  wait "$pid"
  t1=$(date +%s.%N)
  local ops cpu
  ops=$(sqlite3 "$work/c.db" "SELECT SUM(ops) FROM phase_summary")
  # The children's CPU of this shell grows by kvdrive's (bash's times builtin: user, system).
  times >"$work/times"  # in this shell: a command substitution would be a child without them
  cpu=$(awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] } print s }' "$work/times")
  echo "$label $w $ops $cpu" >>"$work/cost.txt"
}
: >"$work/cost.txt"
times >"$work/times"  # the runs so far: the first line's CPU starts from here
awk 'NR == 2 { for (i = 1; i <= 2; i++) { split($i, a, "m"); sub("s", "", a[2]); s += a[1] * 60 + a[2] } print "start -", 1, s }' "$work/times" >>"$work/cost.txt"
for ((r = 1; r <= rounds; r++)); do
  order="call kernel"
  ((r % 2 == 0)) && order="kernel call"  # alternated, so a drift of the machine hits both
  for w in $order; do
    cost p1 "$w"; cost p16 "$w" --pipeline 16; cost rate20k "$w" --rate 20000
  done
done
# Each line's CPU is cumulative: the difference from the line before is that run's.
echo
echo "what the stamps cost: kvdrive's CPU per answered request (us) and its rate, medians of $rounds rounds"
awk 'NR > 1 { print $1, $2, $3, $4 - prev } { prev = $4 }' "$work/cost.txt" |
  sort -k1,1 -k2,2 | awk '
  { key = $1 " " $2; n[key]++; us[key, n[key]] = $4 / $3 * 1e6; rps[key, n[key]] = $3 / 4 }
  function median(arr, key, k,   i, j, t, v) {
    for (i = 1; i <= k; i++) v[i] = arr[key, i]
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
    return v[int((k + 1) / 2)]
  }
  END {
    printf "%-10s %12s %12s %12s %12s %8s %8s\n", "", "call us/req", "kernel us/req", "call req/s", "kernel req/s", "CPU", "rate"
    split("p1 p16 rate20k", cfg, " ")
    for (c = 1; c <= 3; c++) {
      a = cfg[c] " call"; b = cfg[c] " kernel"
      ca = median(us, a, n[a]); cb = median(us, b, n[b]); ra = median(rps, a, n[a]); rb = median(rps, b, n[b])
      printf "%-10s %12.2f %12.2f %12.0f %12.0f %7.2fx %7.2fx\n", cfg[c], ca, cb, ra, rb, cb / ca, rb / ra
    }
  }'
