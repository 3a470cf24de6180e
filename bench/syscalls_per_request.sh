#!/usr/bin/env bash
# System calls per request, kvdrive next to memtier_benchmark on the same local redis-server and
# memcached: each run under `perf stat` counting the syscall tracepoints (every thread of the
# process, no ptrace: strace slowed kvdrive more than memtier and changed how its pipelined
# requests batch), each call that moves requests (sends, receives, epoll, futex) divided by
# the requests the tool reports, and the receives that returned EAGAIN (found nothing).
# With --perf, each configuration is run once more per tool under `perf record -e cpu-clock -g`
# and the top symbols by self time are printed.
#
# Usage: bench/syscalls_per_request.sh [--duration S] [--kvdrive PATH] [--memtier PATH]
#                                      [--configs GLOB] [--ios LIST] [--perf] [--out FILE]
#   --duration S    seconds per run (default 3)
#   --kvdrive PATH  default $KV_BUILD_DIR/driver/kvdrive, else build/
#   --memtier PATH  default memtier_benchmark on PATH, else /work/peers/memtier/bin/ or
#                   /tmp/memtier-src/; absent: its rows say "skipped"
#   --configs GLOB  which of redis|memcached-1:10-100B-p1|p16, redis|memcached-1:1-10KB-p16
#                   (default all six)
#   --ios LIST      kvdrive's --io values, one row each (default epoll,uring)
#   --perf          also profile (kvdrive with the last of --ios)
#   --out FILE      also write the Markdown tables to FILE
# Every tool runs 2 threads x 25 connections, mixed phase, uniform keys over 20,000 keys
# prefilled by kvdrive. Needs redis-server, memcached, perf (Debian's linux-perf; root, or
# kernel.perf_event_paranoid <= -1 for the tracepoints), jq.
set -euo pipefail

duration=3 kvdrive="" memtier="" configs="*" perf=0 out="" ios=epoll,uring
while (($#)); do
  case $1 in
    --duration) duration=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    --memtier) memtier=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --ios) ios=$2; shift 2 ;;
    --perf) perf=1; shift ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "syscalls_per_request: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $duration =~ ^[1-9][0-9]*$ ]] || { echo "syscalls_per_request: --duration '$duration': a whole number of seconds" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z $kvdrive ]]; then
  kvdrive=${KV_BUILD_DIR:-$root/build}/driver/kvdrive
fi
[[ -x $kvdrive ]] || { echo "syscalls_per_request: no kvdrive at '$kvdrive' (build it, or --kvdrive PATH)" >&2; exit 2; }
if [[ -z $memtier ]]; then
  for m in "$(command -v memtier_benchmark || true)" /work/peers/memtier/bin/memtier_benchmark \
           /tmp/memtier-src/memtier_benchmark; do
    [[ -n $m && -x $m ]] && { memtier=$m; break; }
  done
fi
for tool in redis-server memcached perf jq; do
  command -v "$tool" >/dev/null || { echo "syscalls_per_request: '$tool' is not installed" >&2; exit 2; }
done

work=$(mktemp -d /tmp/kv-syscalls.XXXXXX)
server_pids=()
cleanup() {
  local status=$?
  for p in "${server_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${server_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$root/scripts/lib.sh"
rport=$(kv_free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" \
  --logfile "$work/redis.log" >/dev/null &
server_pids+=($!)
mport=$(kv_free_port)
muser=(); ((EUID == 0)) && muser=(-u nobody)
memcached "${muser[@]}" -l 127.0.0.1 -p "$mport" -U 0 -m 2048 -t 4 >"$work/memcached.log" 2>&1 &
server_pids+=($!)
kv_wait_port "$rport" "$work/redis.log"
kv_wait_port "$mport" "$work/memcached.log"

keys=20000
calls="sendto write writev sendmsg recvfrom read readv recvmsg epoll_wait epoll_pwait epoll_ctl poll futex io_uring_enter"
# per_request FILE OPS: OPS, then count/OPS for each call above, the receives that returned
# EAGAIN per request, and the sum of the calls above per request, from perf stat -x, output
# ("count,,event,...").
per_request() {
  awk -F, -v ops="$2" -v list="$calls" '
    BEGIN { n = split(list, want, " "); for (i = 1; i <= n; i++) c[want[i]] = 0 }
    $3 ~ /^syscalls:sys_enter_/ { name = $3; sub(/^syscalls:sys_enter_/, "", name); c[name] += $1 }
    $3 ~ /^syscalls:sys_exit_/ { err += $1 }
    END {
      tot = 0
      printf "%d", ops
      for (i = 1; i <= n; i++) { tot += c[want[i]]; printf " %.2f", c[want[i]] / ops }
      printf " %.2f %.2f\n", err / ops, tot / ops
    }' "$1"
}
# counted CMD...: runs CMD under perf stat, counts in $work/count.csv.
counted() {
  local ev=() c
  for c in $calls; do ev+=(-e "syscalls:sys_enter_$c"); done
  for c in recvfrom read readv recvmsg; do ev+=(-e "syscalls:sys_exit_$c" --filter 'ret == -11'); done
  perf stat -x, "${ev[@]}" -o "$work/count.csv" -- "$@"
}

rows=()
perf_notes=()
run_config() { # name proto ratio size pipeline
  local name=$1 proto=$2 ratio=$3 size=$4 pipe=$5 uri port mproto
  if [[ $proto == redis ]]; then uri=redis://127.0.0.1:$rport port=$rport mproto=redis
  else uri=memcached://127.0.0.1:$mport port=$mport mproto=memcache_text; fi
  "$kvdrive" run --db "$work/load.db" --target "$uri" --keys "$keys" --value-size "$size" \
    --phases load --threads 2 >/dev/null 2>&1
  local kv=() io ops
  for io in ${ios//,/ }; do
    kv=("$kvdrive" run --db "$work/kv.db" --target "$uri" --keys "$keys" --value-size "$size"
        --phases mixed --ratio "$ratio" --key-pattern uniform --duration "${duration}s"
        --threads 2 --connections 25 --pipeline "$pipe" --io "$io" --json)
    counted "${kv[@]}" >"$work/kv.json" 2>"$work/kv.err" ||
      { echo "syscalls_per_request: kvdrive failed:" >&2; tail -3 "$work/kv.err" >&2; exit 1; }
    ops=$(jq '[.phases[] | select(.phase == "mixed") | .ops] | add' "$work/kv.json")
    rows+=("$name kvdrive-$io $(per_request "$work/count.csv" "$ops")")
  done
  local mt=()
  if [[ -n $memtier ]]; then
    mt=("$memtier" -s 127.0.0.1 -p "$port" --protocol=$mproto --ratio="$ratio" --data-size="$size"
        --key-pattern=R:R --key-prefix=kv: --key-minimum=1 --key-maximum=$((keys - 1))
        --threads=2 --clients=25 --pipeline="$pipe" --test-time="$duration" --hide-histogram
        --json-out-file="$work/mt.json")
    counted "${mt[@]}" >"$work/mt.txt" 2>&1 ||
      { echo "syscalls_per_request: memtier failed:" >&2; tail -3 "$work/mt.txt" >&2; exit 1; }
    ops=$(jq '."ALL STATS".Totals.Count' "$work/mt.json")
    rows+=("$name memtier $(per_request "$work/count.csv" "$ops")")
  else
    rows+=("$name memtier skipped")
  fi
  if ((perf)); then
    local tool cmd
    for tool in kvdrive memtier; do
      if [[ $tool == kvdrive ]]; then cmd=("${kv[@]}"); else [[ -n $memtier ]] || continue; cmd=("${mt[@]}"); fi
      perf record -q -e cpu-clock -g -o "$work/$tool.perf" -- "${cmd[@]}" >/dev/null 2>&1 || true
      perf_notes+=("### $name, $tool (perf record -e cpu-clock -g; self time, top 15)")
      perf_notes+=('```')
      while IFS= read -r l; do perf_notes+=("$l"); done < <(
        perf report -q -i "$work/$tool.perf" --no-children --sort dso,symbol --stdio 2>/dev/null |
          grep -E '^ +[0-9]' | head -15)
      perf_notes+=('```')
    done
  fi
}

for c in "redis-1:10-100B-p1 redis 1:10 100 1" "redis-1:10-100B-p16 redis 1:10 100 16" \
         "memcached-1:10-100B-p1 memcached 1:10 100 1" "memcached-1:10-100B-p16 memcached 1:10 100 16" \
         "redis-1:1-10KB-p16 redis 1:1 10240 16" "memcached-1:1-10KB-p16 memcached 1:1 10240 16"; do
  read -r name proto ratio size pipe <<<"$c"
  # shellcheck disable=SC2053  # a glob on purpose
  [[ $name == $configs ]] || continue
  echo "syscalls_per_request: $name" >&2
  run_config "$name" "$proto" "$ratio" "$size" "$pipe"
done

{
  echo "## System calls per request ($(date -u +%Y-%m-%dT%H:%M)Z, ${duration} s per run, 2 threads x 25 connections)"
  echo
  echo "kvdrive: $kvdrive; memtier: ${memtier:-skipped}; perf stat syscall tracepoints, counts / requests the tool reported."
  echo
  printf '| configuration | tool | requests |'
  for c in $calls; do printf ' %s |' "$c"; done
  echo ' receives that returned EAGAIN | all of these |'
  printf '|---|---|---:|'
  for _ in $calls; do printf -- '---:|'; done
  echo '---:|---:|'
  for r in "${rows[@]}"; do
    read -r -a f <<<"$r"
    line="| $(printf '%s | ' "${f[@]}")"
    echo "${line% }"
  done
  if ((perf)); then echo; printf '%s\n' "${perf_notes[@]}"; fi
} | tee "${out:-/dev/null}"
