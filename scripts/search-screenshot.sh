#!/usr/bin/env bash
# Regenerates docs/search-curve-redis.png and docs/search-curve-memcached.png: a real capacity
# search (`kvdrive run --search`) on a local redis-server and on a local memcached, each held to
# a tenth of a core by a CPU cgroup (as in docs/capacity-search.md) and watched by kvmon, then
# the HTML report's search section (the latency-throughput curve and the achieved-vs-offered
# chart) rendered by headless Chromium.
# Usage: scripts/search-screenshot.sh [OUT_DIR]   (default docs/; needs root for the cgroup,
# redis-server, memcached and chromium on PATH; KV_BUILD_DIR as for scripts/build.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${KV_BUILD_DIR:-$root/build}
out=${1:-$root/docs}
kvdrive=$build/driver/kvdrive
kvmon=$build/monitor/kvmon
for p in "$kvdrive" "$kvmon"; do [[ -x $p ]] || { echo "missing $p: build first" >&2; exit 2; }; done
for p in redis-server memcached chromium; do
  command -v "$p" >/dev/null || { echo "missing $p" >&2; exit 2; }
done
[[ $(id -u) == 0 ]] || { echo "needs root (a CPU cgroup holds the store)" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
pids=()
cg=""
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ -n $cg ]] && rmdir "$cg" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_port() {
  for _ in $(seq 100); do
    /usr/bin/python3 -c "import socket,sys; socket.create_connection(('127.0.0.1',$1),0.2)" \
      2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  exit 1
}
# A CPU cgroup of 5 ms per 50 ms (a tenth of a core), v1 or v2.
make_cgroup() {
  if [[ -f /sys/fs/cgroup/cpu/cgroup.procs ]]; then
    cg=/sys/fs/cgroup/cpu/kvbench-shot-$$
    mkdir -p "$cg"
    echo 50000 >"$cg/cpu.cfs_period_us"
    echo 5000 >"$cg/cpu.cfs_quota_us"
  else
    echo +cpu >/sys/fs/cgroup/cgroup.subtree_control || true
    cg=/sys/fs/cgroup/kvbench-shot-$$
    mkdir -p "$cg"
    echo "5000 50000" >"$cg/cpu.max"
  fi
}

# search KIND URI PID NAME: kvmon on PID, the search, the report, the screenshot.
search() {
  local kind=$1 uri=$2 pid=$3 name=$4 db=$work/$1.db
  echo "$pid" >"$cg/cgroup.procs"
  "$kvmon" --db "$db" --pid "$pid" --flush-interval 1s 2>"$work/kvmon-$kind.log" &
  local mon=$!
  pids+=("$mon")
  # The command shown in docs/capacity-search.md.
  (set -x; nice -n -10 "$kvdrive" run --db "$db" --target "$uri" --name "$name" --keys 1000 \
    --value-size 4K --threads 2 --connections 8 --search --slo p90=50ms,p99=200ms \
    --min-achieved 0.9 --duration 2s --warmup 1s --search-start 500 --search-precision 0.1 \
    --search-steps 8)
  kill "$mon"
  wait "$mon" || true
  "$kvdrive" report --db "$db" --run 1 --html "$work/$kind.html" >/dev/null
  # The page's search section alone (its style sheet kept), so the shot is the curve.
  /usr/bin/python3 - "$work/$kind.html" "$work/$kind-curve.html" <<'EOF'
import sys
page = open(sys.argv[1], encoding="utf-8").read()
head = page[: page.index("<body")]
at = page.index("<h3>Capacity search on")
ends = [i for i in (page.find("<h2", at), page.find("</body", at)) if i >= 0]
end = min(ends)
cut = page.find('<p class="note"><b>Curve</b>', at)  # the tables below the charts are left out
if 0 <= cut < end:
    end = cut
open(sys.argv[2], "w", encoding="utf-8").write(head + "<body>" + page[at:end] + "</body></html>")
EOF
  local profile=$work/profile-$kind
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --hide-scrollbars --window-size=1000,760 \
    --screenshot="$out/search-curve-$kind.png" "file://$work/$kind-curve.html" \
    >"$work/chromium-$kind.log" 2>&1
  ls -l "$out/search-curve-$kind.png"
}

make_cgroup
rport=$(free_port)
redis-server --port "$rport" --save "" --appendonly no --bind 127.0.0.1 >"$work/redis.log" 2>&1 &
pids+=($!)
wait_port "$rport"
search redis "redis://127.0.0.1:$rport" "${pids[-1]}" "redis at 10 % of a core"

mport=$(free_port)
memcached -p "$mport" -l 127.0.0.1 -t 1 -m 64 -U 0 -u root >"$work/memcached.log" 2>&1 &
pids+=($!)
wait_port "$mport"
search memcached "memcached://127.0.0.1:$mport" "${pids[-1]}" "memcached at 10 % of a core"
