#!/usr/bin/env bash
# Where the Nagle / delayed-ACK stall shows (issue 16): set latency by value size with Nagle on
# (?nodelay=0), one write per set (?writes=one, the default) against the command line and the
# value in two writes (?writes=split, as the clients of the seed study's era wrote them), and
# split with nodelay=1. memcached (text and binary) and redis-server run with kvdrive in a
# network namespace made here whose loopback has the given MTU (1500: an Ethernet path's MSS of
# 1448 bytes); closed loop, one thread, one connection, the load phase's sets.
#
# Usage (root): bench/split_writes.sh [--mtu 1500] [--sizes 100,1000,1400,1500,2000,4000,10000,100000]
#                                     [--keys 40] [--kvdrive PATH]
# Prints a markdown table: p50 / p99 of a set (ms) and sets/s per size and configuration.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mtu=1500 sizes=100,1000,1400,1500,2000,4000,10000,100000 keys=40 kvdrive=""
while (($#)); do
  case "$1" in
    --mtu) mtu=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --keys) keys=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done
kvdrive=${kvdrive:-${KV_BUILD_DIR:-$root/build}/driver/kvdrive}
[[ -x "$kvdrive" ]] || { echo "no kvdrive at $kvdrive (build it, or --kvdrive PATH)" >&2; exit 2; }
for p in ip memcached redis-server; do
  command -v "$p" >/dev/null || { echo "$p is missing" >&2; exit 2; }
done
ns=kvbench-split-$$
tmp=$(mktemp -d)
cleanup() {
  [[ -n "${mc_pid:-}" ]] && kill "$mc_pid" 2>/dev/null || true  # may have died: go on
  [[ -n "${redis_pid:-}" ]] && kill "$redis_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  ip netns del "$ns" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns"
ip netns exec "$ns" ip link set lo mtu "$mtu" up
ip netns exec "$ns" memcached -p 11211 -l 127.0.0.1 -U 0 -u root &
mc_pid=$!
ip netns exec "$ns" redis-server --port 6379 --bind 127.0.0.1 --save "" --dir "$tmp" \
  --protected-mode no >"$tmp/redis.log" &
redis_pid=$!
for port in 11211 6379; do
  for _ in $(seq 100); do
    ip netns exec "$ns" bash -c "exec 3<>/dev/tcp/127.0.0.1/$port" 2>/dev/null && break
    sleep 0.1
  done
done

configs=(
  "memcached text, writes=one|memcached://127.0.0.1:11211?nodelay=0"
  "memcached text, writes=split|memcached://127.0.0.1:11211?nodelay=0&writes=split"
  "memcached text, split, nodelay=1|memcached://127.0.0.1:11211?nodelay=1&writes=split"
  "memcached binary, writes=split|memcached://127.0.0.1:11211?protocol=binary&nodelay=0&writes=split"
  "redis, writes=one|redis://127.0.0.1:6379?nodelay=0"
  "redis, writes=split|redis://127.0.0.1:6379?nodelay=0&writes=split"
)
echo "loopback MTU $mtu, $keys sets per cell, closed loop, 1 connection: p50 / p99 ms, sets/s"
echo
printf '| value |'
for c in "${configs[@]}"; do printf ' %s |' "${c%%|*}"; done
printf '\n|---|'
for _ in "${configs[@]}"; do printf -- '---|'; done
printf '\n'
IFS=, read -ra size_list <<<"$sizes"
n=0
for size in "${size_list[@]}"; do
  printf '| %s B |' "$size"
  for c in "${configs[@]}"; do
    n=$((n + 1))
    ip netns exec "$ns" "$kvdrive" run --engine events --db "$tmp/$n.db" --target "${c#*|}" \
      --phases load --keys "$keys" -d "$size" --threads 1 --connections 1 --json \
      >"$tmp/$n.json" 2>"$tmp/$n.log" || { printf ' failed |'; continue; }
    /usr/bin/python3 -c '
import json, sys
p = [x for x in json.load(open(sys.argv[1]))["phases"] if x["op"] == "set"][0]
print(" %.2f / %.2f, %.0f |" % (p["lat_p50_us"] / 1e3, p["lat_p99_us"] / 1e3, p["req_per_s"]), end="")
' "$tmp/$n.json"
  done
  printf '\n'
done
