#!/usr/bin/env bash
# Regenerates docs/workload-production.png: docs/workloads.md's production-shaped example (20 %
# writes, 10 % deletes, 40-byte keys, values 50 B to 10 KB with a long tail, zipf 1.2, a 5-minute
# TTL, cache-aside) run on a local redis-server and memcached, each with 64 MB of memory, kvmon
# watching both, then the top of the HTML report rendered by headless Chromium.
# Usage: scripts/workload-screenshot.sh [OUT_DIR] [DURATION]   (default docs/ and 30s; needs
# redis-server, memcached and chromium on PATH; KV_BUILD_DIR as for scripts/build.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KV_BUILD_DIR:-$root/build}
out=${1:-$root/docs}
duration=${2:-30s}
kvdrive=$build/driver/kvdrive
kvmon=$build/monitor/kvmon
for p in "$kvdrive" "$kvmon"; do [[ -x $p ]] || { echo "missing $p: build first" >&2; exit 2; }; done
for p in redis-server memcached chromium; do
  command -v "$p" >/dev/null || { echo "missing $p" >&2; exit 2; }
done
mkdir -p "$out"
source "$root/scripts/lib.sh"
work=$(mktemp -d)
pids=()
kv_stop_on_exit workload-screenshot "$work"

rport=$(kv_free_port)
redis-server --port "$rport" --save "" --appendonly no --bind 127.0.0.1 --maxmemory 64mb \
  --maxmemory-policy allkeys-lru >"$work/redis.log" 2>&1 &
pids+=($!)
rpid=$!
mport=$(kv_free_port)
memcached -p "$mport" -l 127.0.0.1 -t 1 -m 64 -U 0 -u root >"$work/memcached.log" 2>&1 &
pids+=($!)
mpid=$!
kv_wait_port "$rport" "$work/redis.log"
kv_wait_port "$mport" "$work/memcached.log"
db=$work/production.db
"$kvmon" --db "$db" --pid "$rpid" --pid "$mpid" --flush-interval 1s 2>"$work/kvmon.log" &
mon=$!
pids+=("$mon")
# The command shown in docs/workloads.md, "A production-shaped workload".
(set -x; "$kvdrive" run --db "$db" --target "redis://127.0.0.1:$rport" \
  --target "memcached://127.0.0.1:$mport" --name production-shaped --phases mixed \
  --keys 200000 --mix get:70,set:20,delete:10 --cache-aside --key-size 40 \
  --value-size 50:40,230:40,1K:15,10K:5 --key-pattern zipf:1.2 --ttl 5m \
  --rate 4000 --duration "$duration" --threads 2 --connections 4)
kill "$mon"
wait "$mon" || true
"$kvdrive" report --db "$db" --run 1
"$kvdrive" report --db "$db" --run 1 --html "$work/report.html" >/dev/null
profile=$work/profile
chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$profile" --hide-scrollbars --window-size=1100,1500 \
  --screenshot="$out/workload-production.png" "file://$work/report.html" \
  >"$work/chromium.log" 2>&1
ls -l "$out/workload-production.png"
