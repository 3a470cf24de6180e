#!/usr/bin/env bash
# kvdrive's wire part (sent -> the kernel's receive stamp of the reply; schema/README.md "Whose
# time is it") beside a packet capture of the same requests on loopback: tcpdump's request ->
# reply time per request of kvdrive's one connection, p50 and p90 of both, and their difference.
# One redis-server on a free loopback port, kvdrive at a light open-loop rate (--rate 2000
# --threads 1 --connections 1: one request in flight at a time, so request and reply alternate
# on the wire). Needs redis-server, tcpdump, sqlite3; root (tcpdump on lo).
# Usage: bench/wire_vs_capture.sh [--rate R] [--duration D] [--kvdrive PATH]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
rate=2000 duration=10s kvdrive=
while (($#)); do
  case $1 in
    --rate) rate=$2; shift 2 ;;
    --duration) duration=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
tcpdump -i lo -nn -s 96 -w "$work/cap.pcap" "tcp port $port" 2>"$work/tcpdump.log" &
pids+=($!)
sleep 1  # tcpdump's capture is open once it printed "listening"; give it the second
"$kvdrive" --log-level warn run --db "$work/r.db" --target "redis://127.0.0.1:$port" \
  --phases read --keys 1000 --rate "$rate" --threads 1 --connections 1 --duration "$duration" \
  >"$work/kvdrive.log" 2>&1
sleep 0.5
kill "${pids[1]}"; wait "${pids[1]}" 2>/dev/null || true

# The capture: request -> reply per client port, a request being a packet with payload to the
# server and its reply the next packet with payload from it. The connection with the most
# exchanges is the read phase's (the others are the settings and stats connections).
tcpdump -tt -nn -r "$work/cap.pcap" 2>/dev/null | awk -v port="$port" '
  $2 == "IP" && $NF != "0" {
    src = $3; dst = $5; sub(":$", "", dst)
    n = split(src, s, "."); sport = s[n]; m = split(dst, d, "."); dport = d[m]
    if (dport == port) { req[sport] = $1 }
    else if (sport == port && (dport in req)) {
      printf "%s %.3f\n", dport, ($1 - req[dport]) * 1e6; delete req[dport]
    }
  }' >"$work/deltas.txt"
conn=$(awk '{ c[$1]++ } END { for (k in c) if (c[k] > best) { best = c[k]; p = k }; print p }' "$work/deltas.txt")
awk -v c="$conn" '$1 == c { print $2 }' "$work/deltas.txt" | sort -n >"$work/conn.txt"
count=$(wc -l <"$work/conn.txt")
pct() { awk -v q="$1" -v n="$count" 'NR == int(q * n + 0.999999) { print; exit }' "$work/conn.txt"; }

q() { sqlite3 "$work/r.db" "$1"; }
echo "kvdrive --rate $rate --threads 1 --connections 1 --duration $duration, redis-server $(redis-server --version | awk '{print $3}'), $(uname -r)"
echo "capture: $count request -> reply exchanges on the read connection"
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
echo "kvdrive's buckets are HdrHistogram-like (their upper bound, within 0.8 %); the capture's are exact."
