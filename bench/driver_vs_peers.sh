#!/usr/bin/env bash
# kvdrive next to its peers (memtier_benchmark, redis-benchmark, memcslap) on the same local
# redis-server and memcached, in alternation: for every configuration, round r runs kvdrive, then
# each peer, then round r+1 does it again, so slow drifts of a shared machine hit every tool alike.
# Per pairing it prints the medians over the rounds of ops/s, client CPU s (user+system) per
# million ops, server CPU s per million ops, mean and p99 latency, and the ratios kvdrive/peer.
#
# Usage: bench/driver_vs_peers.sh [--duration S] [--rounds N] [--keys N] [--kvdrive PATH]
#                                 [--memtier PATH] [--engine E] [--conns LIST] [--configs GLOB]
#                                 [--baseline PATH] [--kvdrive-args ARGS] [--baseline-args ARGS]
#                                 [--out FILE] [--keep]
#   --duration S    seconds per measurement (default 4)
#   --rounds N      rounds of alternation, at least 3 (default 3)
#   --keys N        keyspace, prefilled before each value size (default 20000)
#   --kvdrive PATH  default $KV_BUILD_DIR/driver/kvdrive, else build-perf/ or build/
#   --memtier PATH  default memtier_benchmark on PATH, else /work/peers/memtier/bin/ or
#                   /tmp/memtier-src/; absent -> its rows say "skipped"
#   --engine E      events (default: every connection independent, 2 threads x N/2 connections
#                   everywhere, as memtier) or classic (memcached unpipelined: one blocking
#                   thread per connection; otherwise lock-step lanes), which only a kvdrive
#                   built before 2026-12-03 has; passed to kvdrive as --engine only for classic
#                   (today's kvdrive has no --engine: the event loop is its only engine)
#   --conns LIST    connection counts, comma-separated (default 50; e.g. 1,10,100,1000 for the
#                   connection-scaling table): 1 thread for 1 connection, else 2 threads
#   --memtier-only  no redis-benchmark / memcslap rows (e.g. for --conns 1000)
#   --baseline PATH a second kvdrive build (e.g. before a change), run right after kvdrive in
#                   every round with the same flags; its rows (tool kvdrive-baseline) give the
#                   kvdrive/baseline ratios of one run on the same machine, and `kvdrive compare
#                   --baseline` of the two builds' rounds gives, per configuration, req/s, p50
#                   and p99 as kvdrive/baseline with a 95 % interval and a verdict (an interval
#                   needs 4 rounds or more: --rounds 5)
#   --kvdrive-args ARGS, --baseline-args ARGS
#                   more kvdrive options for kvdrive's / the baseline's runs, split at spaces (e.g.
#                   the same binary as both, --kvdrive-args '--io uring' --baseline-args '--io
#                   epoll': the two transports side by side with memtier in one run)
#   --configs GLOB  only configurations whose name matches (e.g. 'redis-*-c50p16')
#   --out FILE      markdown report (default bench/results/driver_vs_peers-<date>.md)
#   --keep          keep the temp dir (raw rows, logs, results dbs)
# The whole default run (16 configurations x 3 rounds x up to 3 tools) takes about 10 minutes on
# 2 cores. How every peer's flags map to kvdrive's workload: bench/README.md.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
duration=4 rounds=3 keys=20000 kvdrive="" memtier="" configs="*" out="" keep=0 engine=events conns_list=50 memtier_only=0 baseline=""
kvdrive_args="" baseline_args=""
command_line="$0 $*"
while (($#)); do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --keys) keys=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    --memtier) memtier=$2; shift 2 ;;
    --configs) configs=$2; shift 2 ;;
    --engine) engine=$2; shift 2 ;;
    --kvdrive-args) kvdrive_args=$2; shift 2 ;;
    --baseline-args) baseline_args=$2; shift 2 ;;
    --conns) conns_list=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --memtier-only) memtier_only=1; shift ;;
    --baseline) baseline=$2; shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "driver_vs_peers: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$duration" =~ ^[0-9]+$ ]] && ((duration >= 1)) || { echo "driver_vs_peers: --duration: whole seconds >= 1" >&2; exit 2; }
[[ "$rounds" =~ ^[0-9]+$ ]] && ((rounds >= 3)) || { echo "driver_vs_peers: --rounds must be >= 3" >&2; exit 2; }
[[ "$keys" =~ ^[0-9]+$ ]] && ((keys >= 100)) || { echo "driver_vs_peers: --keys must be >= 100" >&2; exit 2; }
[[ "$engine" == events || "$engine" == classic ]] || { echo "driver_vs_peers: --engine: events or classic" >&2; exit 2; }
[[ "$conns_list" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]] || { echo "driver_vs_peers: --conns: comma-separated counts >= 1" >&2; exit 2; }
IFS=, read -r -a conn_counts <<<"$conns_list"
max_conns=0; for c in "${conn_counts[@]}"; do ((c > max_conns)) && max_conns=$c; done
# One fd per connection (+ the servers' own): raise the soft limit as far as the hard one allows.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
((max_conns + 100 <= $(ulimit -n))) || { echo "driver_vs_peers: --conns $max_conns needs more open files than ulimit -n allows ($(ulimit -n))" >&2; exit 2; }

if [[ -z "$kvdrive" ]]; then
  for d in "${KV_BUILD_DIR:-}" "$root/build-perf" "$root/build"; do
    [[ -n "$d" && -x "$d/driver/kvdrive" ]] && { kvdrive=$d/driver/kvdrive; break; }
  done
fi
if [[ -z "$memtier" ]]; then
  memtier=$(command -v memtier_benchmark || true)
  for m in /work/peers/memtier/bin/memtier_benchmark /tmp/memtier-src/memtier_benchmark; do
    [[ -z "$memtier" && -x $m ]] && memtier=$m
  done
fi
[[ -n "$memtier" && ! -x "$memtier" ]] && memtier=""

missing=()
[[ -n "$kvdrive" && -x "$kvdrive" ]] || missing+=("kvdrive (build it: ninja -C build kvdrive, or pass --kvdrive)")
[[ -z "$baseline" || -x "$baseline" ]] || missing+=("--baseline $baseline (not an executable)")
for p in redis-server:redis-server memcached:memcached redis-benchmark:redis-tools \
         memcslap:libmemcached-tools memcflush:libmemcached-tools sqlite3:sqlite3 jq:jq ss:iproute2; do
  command -v "${p%%:*}" >/dev/null || missing+=("${p%%:*} (Debian package: ${p#*:})")
done
[[ -x /usr/bin/time ]] || missing+=("/usr/bin/time (Debian package: time)")
if ((${#missing[@]})); then
  echo "driver_vs_peers: missing, nothing was installed:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi

stamp=$(date +%Y-%m-%d)
[[ -n "$out" ]] || out="$root/bench/results/driver_vs_peers-$stamp.md"
mkdir -p "$(dirname "$out")"
work=$(mktemp -d "${TMPDIR:-/tmp}/driver-vs-peers-XXXXXX")
server_pids=()
cleanup() {
  local status=$?
  for p in "${server_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${server_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if ((keep)); then echo "driver_vs_peers: kept $work" >&2; else rm -rf "$work"; fi
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$(cd "$(dirname "$0")/.." && pwd)/scripts/lib.sh"
free_port() { kv_free_port || exit 1; }
wait_port() { kv_wait_port "$1" "$2" || exit 1; }  # PORT LOG

rport=$(free_port)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no --dir "$work" --maxclients $((max_conns + 1024)) \
  --logfile "$work/redis.log" >/dev/null &
rpid=$!; server_pids+=("$rpid")
mport=$(free_port)
muser=(); ((EUID == 0)) && muser=(-u nobody)
memcached "${muser[@]}" -l 127.0.0.1 -p "$mport" -U 0 -m 2048 -t 4 -c $((max_conns + 1024)) >"$work/memcached.log" 2>&1 &
mpid=$!; server_pids+=("$mpid")
wait_port "$rport" "$work/redis.log"; wait_port "$mport" "$work/memcached.log"

# Server CPU seconds (utime + stime of all its threads) from /proc/PID/stat.
tck=$(getconf CLK_TCK)
server_cpu() { awk -v t="$tck" '{ printf "%.3f", ($14 + $15) / t }' "/proc/$1/stat"; }
# Runs a command under /usr/bin/time; sets cli_cpu (user+system s), srv_cpu (server delta s).
timed() { # SERVER_PID OUTFILE CMD...
  local spid=$1 outf=$2; shift 2
  local s0; s0=$(server_cpu "$spid")
  /usr/bin/time -f "%U %S" -o "$work/time" "$@" >"$outf" 2>"$outf.err" || {
    echo "driver_vs_peers: failed: $*" >&2; tail -5 "$outf.err" >&2; return 1; }
  srv_cpu=$(awk -v a="$s0" -v b="$(server_cpu "$spid")" 'BEGIN { printf "%.3f", b - a }')
  cli_cpu=$(awk 'END { printf "%.3f", $1 + $2 }' "$work/time")
}
raw="$work/raw.tsv"
: >"$raw"
: >"$work/run_ids.tsv"  # config tool run_id: each kvdrive build's runs, for compare
# config tool round ops seconds client_cpu_s server_cpu_s mean_us p99_us
emit() { printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$raw"; }
skip() { printf '%s\t%s\tskipped\n' "$1" "$2" >>"$raw"; }

threads=2 per_thread=25   # set per connection count: threads x per_thread connections
last_rate=20000                  # kvdrive's ops/s of the current round: sizes request-count peers

kvdrive_run() { # config proto uri ratio size pipeline round [binary tool]
  local cfg=$1 proto=$2 uri=$3 ratio=$4 size=$5 pipe=$6 r=$7 bin=${8:-$kvdrive} tool=${9:-kvdrive}
  # One results file per tool: a baseline build may read an older schema than kvdrive writes.
  local spid conn_args db=$work/$tool.db
  spid=$rpid; [[ $proto == redis ]] || spid=$mpid
  if [[ $proto == memcached && $engine == classic ]] && ((pipe == 1)); then
    conn_args=(--threads $((threads * per_thread)))  # one blocking connection each
  else conn_args=(--threads $threads --connections $per_thread --pipeline "$pipe"); fi
  local engine_args=() extra
  [[ $engine == events ]] || engine_args=(--engine "$engine")
  extra=$kvdrive_args; [[ $tool == kvdrive ]] || extra=$baseline_args
  # shellcheck disable=SC2206  # split at spaces, as documented
  engine_args+=($extra)
  timed "$spid" "$work/kv.json" "$bin" run "${engine_args[@]}" --db "$db" --target "$uri" --keys "$keys" \
    --value-size "$size" --phases mixed --ratio "$ratio" --key-pattern uniform \
    --duration "${duration}s" "${conn_args[@]}" --json || return 0
  local run_id ops secs mean p99
  run_id=$(jq -r .run_id "$work/kv.json")
  ops=$(jq '[.phases[] | select(.phase == "mixed") | .ops] | add' "$work/kv.json")
  secs=$(jq '[.phases[] | select(.phase == "mixed") | .seconds] | max' "$work/kv.json")
  mean=$(jq '[.phases[] | select(.phase == "mixed")] | (map(.ops * .lat_mean_us) | add) / (map(.ops) | add)' "$work/kv.json")
  p99=$(sqlite3 "$db" "WITH c AS (SELECT upper_us, SUM(count) n FROM latency_buckets
      WHERE timing = 'sent' AND phase_id IN (SELECT phase_id FROM phases WHERE run_id = $run_id AND kind = 'mixed')
      GROUP BY upper_us), t AS (SELECT upper_us, SUM(n) OVER (ORDER BY upper_us) cum, SUM(n) OVER () tot FROM c)
      SELECT MIN(upper_us) FROM t WHERE cum >= 0.99 * tot")
  [[ $tool == kvdrive ]] && last_rate=$(awk -v o="$ops" -v s="$secs" 'BEGIN { printf "%d", o / s }')
  printf '%s\t%s\t%s\n' "$cfg" "$tool" "$run_id" >>"$work/run_ids.tsv"
  emit "$cfg" "$tool" "$r" "$ops" "$secs" "$cli_cpu" "$srv_cpu" "$mean" "$p99"
}

baseline_run() { # as kvdrive_run, with --baseline's binary (nothing without it)
  [[ -n "$baseline" ]] || return 0
  kvdrive_run "$@" "$baseline" kvdrive-baseline
}

memtier_run() { # config proto port ratio size pipeline round
  local cfg=$1 proto=$2 port=$3 ratio=$4 size=$5 pipe=$6 r=$7 spid mproto
  [[ -n "$memtier" ]] || { skip "$cfg" memtier; return 0; }
  if [[ $proto == redis ]]; then spid=$rpid mproto=redis; else spid=$mpid mproto=memcache_text; fi
  timed "$spid" "$work/mt.txt" "$memtier" -s 127.0.0.1 -p "$port" --protocol=$mproto \
    --ratio="$ratio" --data-size="$size" --key-pattern=R:R --key-prefix=kv: --key-minimum=1 \
    --key-maximum=$((keys - 1)) --threads=$threads --clients=$per_thread --pipeline="$pipe" \
    --test-time="$duration" --hide-histogram --print-percentiles=50,99 \
    --json-out-file="$work/mt.json" || return 0
  # Totals: Ops/sec Hits/sec Misses/sec Avg p50 p99 KB/sec (latencies in ms)
  local count line
  count=$(jq '."ALL STATS".Totals.Count' "$work/mt.json")
  line=$(awk '$1 == "Totals" { print $2, $5 * 1000, $7 * 1000 }' "$work/mt.txt" | tail -1)
  read -r rate mean p99 <<<"$line"
  emit "$cfg" memtier "$r" "$count" "$(awk -v c="$count" -v x="$rate" 'BEGIN { printf "%.3f", c / x }')" \
    "$cli_cpu" "$srv_cpu" "$mean" "$p99"
}

# redis-benchmark and memcslap run one command type per invocation: the ratio is met by running
# the sets and the gets as two invocations sized S:G, summed (ops, CPU, time); the mean is
# weighted by ops and p99 is the larger of the two (an upper bound: they report per command).
split_counts() { # ratio total -> n_sets n_gets
  local s=${1%%:*} g=${1##*:}
  echo $(($2 * s / (s + g))) $(($2 * g / (s + g)))
}

redis_benchmark_run() { # config ratio size pipeline round
  local cfg=$1 ratio=$2 size=$3 pipe=$4 r=$5 total ns ng
  total=$((last_rate * duration))
  read -r ns ng <<<"$(split_counts "$ratio" "$total")"
  local ops=0 secs=0 cpu=0 srv=0 wsum=0 p99=0
  for t in set get; do
    local n=$ns; [[ $t == get ]] && n=$ng
    ((n > 0)) || continue
    timed "$rpid" "$work/rb.csv" redis-benchmark -h 127.0.0.1 -p "$rport" -t $t -n "$n" -r "$keys" \
      -d "$size" -c $((threads * per_thread)) --threads $threads -P "$pipe" --csv || return 0
    # "SET","rps","avg_latency_ms","min","p50","p95","p99","max"
    read -r rps avg q99 <<<"$(awk -F, 'NR == 2 { gsub(/"/, ""); print $2, $3 * 1000, $7 * 1000 }' "$work/rb.csv")"
    ops=$((ops + n))
    secs=$(awk -v a="$secs" -v n="$n" -v x="$rps" 'BEGIN { printf "%.3f", a + n / x }')
    cpu=$(awk -v a="$cpu" -v b="$cli_cpu" 'BEGIN { print a + b }')
    srv=$(awk -v a="$srv" -v b="$srv_cpu" 'BEGIN { print a + b }')
    wsum=$(awk -v a="$wsum" -v n="$n" -v m="$avg" 'BEGIN { print a + n * m }')
    p99=$(awk -v a="$p99" -v b="$q99" 'BEGIN { print (b > a ? b : a) }')
  done
  emit "$cfg" redis-benchmark "$r" "$ops" "$secs" "$cpu" "$srv" \
    "$(awk -v w="$wsum" -v o="$ops" 'BEGIN { print w / o }')" "$p99"
}

memcslap_run() { # config ratio round  (memcslap: fixed own key/value sizes, no latency figures)
  local cfg=$1 ratio=$2 r=$3 total ns ng
  total=$((last_rate * duration))
  read -r ns ng <<<"$(split_counts "$ratio" "$total")"
  local ops=0 secs=0 cpu=0 srv=0
  for t in set get; do
    local n=$ns; [[ $t == get ]] && n=$ng
    local c=$((threads * per_thread)) per=$((n / (threads * per_thread)))
    ((per > 0)) || continue
    timed "$mpid" "$work/ms.txt" memcslap -s "127.0.0.1:$mport" -c $c -e "$per" -t $t || return 0
    local s; s=$(awk '/^Time to (set|get) .* threads:/ { print $(NF-1) }' "$work/ms.txt")
    ops=$((ops + per * c))
    secs=$(awk -v a="$secs" -v b="$s" 'BEGIN { print a + b }')
    cpu=$(awk -v a="$cpu" -v b="$cli_cpu" 'BEGIN { print a + b }')
    srv=$(awk -v a="$srv" -v b="$srv_cpu" 'BEGIN { print a + b }')
  done
  emit "$cfg" memcslap "$r" "$ops" "$secs" "$cpu" "$srv" "" ""
}

prefill() { # proto size
  if [[ $1 == redis ]]; then
    "$kvdrive" run --db "$work/prefill.db" --target "redis://127.0.0.1:$rport" --keys "$keys" \
      --value-size "$2" --phases load --threads 2 --connections 25 --pipeline 16 >/dev/null 2>&1
    # redis-benchmark's own key names (key:%012d): ~95 % of them, unmeasured
    redis-benchmark -h 127.0.0.1 -p "$rport" -t set -n $((keys * 3)) -r "$keys" -d "$2" -c 50 -P 16 -q >/dev/null
  else
    "$kvdrive" run --db "$work/prefill.db" --target "memcached://127.0.0.1:$mport" --keys "$keys" \
      --value-size "$2" --phases load --threads 8 >/dev/null 2>&1
  fi
}

echo "driver_vs_peers: redis :$rport (pid $rpid), memcached :$mport (pid $mpid), ${duration}s x $rounds rounds, keys $keys"
echo "driver_vs_peers: kvdrive $kvdrive $kvdrive_args (--engine $engine)${baseline:+; baseline $baseline $baseline_args}; memtier ${memtier:-skipped (not found)}"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
t_start=$(date +%s)
for proto in redis memcached; do
  for size in 100 10240; do
    prefilled=0
    for ratio in 1:1 1:10; do
      for pipe in 1 16; do
       for nconn in "${conn_counts[@]}"; do
        if ((nconn == 1)); then threads=1 per_thread=1; else threads=2 per_thread=$((nconn / 2)); fi
        sname=$([[ $size == 100 ]] && echo 100B || echo 10KB)
        cfg="$proto-$ratio-$sname-c$((threads * per_thread))p$pipe"
        # shellcheck disable=SC2053
        [[ $cfg == $configs ]] || continue
        ((prefilled)) || { prefill "$proto" "$size"; prefilled=1; }
        echo "driver_vs_peers: $cfg" >&2
        for r in $(seq "$rounds"); do
          if [[ $proto == redis ]]; then
            kvdrive_run "$cfg" redis "redis://127.0.0.1:$rport" "$ratio" "$size" "$pipe" "$r"
            baseline_run "$cfg" redis "redis://127.0.0.1:$rport" "$ratio" "$size" "$pipe" "$r"
            memtier_run "$cfg" redis "$rport" "$ratio" "$size" "$pipe" "$r"
            ((memtier_only)) || redis_benchmark_run "$cfg" "$ratio" "$size" "$pipe" "$r"
          elif ((pipe == 1)); then
            kvdrive_run "$cfg" memcached "memcached://127.0.0.1:$mport" "$ratio" "$size" 1 "$r"
            baseline_run "$cfg" memcached "memcached://127.0.0.1:$mport" "$ratio" "$size" 1 "$r"
            memtier_run "$cfg" memcached "$mport" "$ratio" "$size" 1 "$r"
            ((memtier_only)) || memcslap_run "$cfg" "$ratio" "$r"
          else  # memcslap cannot pipeline
            kvdrive_run "$cfg" memcached "memcached://127.0.0.1:$mport" "$ratio" "$size" "$pipe" "$r"
            baseline_run "$cfg" memcached "memcached://127.0.0.1:$mport" "$ratio" "$size" "$pipe" "$r"
            memtier_run "$cfg" memcached "$mport" "$ratio" "$size" "$pipe" "$r"
          fi
        done
       done
      done
    done
  done
done
elapsed=$(($(date +%s) - t_start))
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

# Medians over rounds, then kvdrive/peer ratios.
table=$(awk -F'\t' '
  function med(s,   a, n, i, j, t) {
    n = split(s, a, " "); if (n == 0) return ""
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
  }
  $3 == "skipped" { k = $1 SUBSEP $2; if (!(k in seen)) { seen[k] = 1; order[++no] = k }; skipped[k] = 1; next }
  {
    k = $1 SUBSEP $2; if (!(k in seen)) { seen[k] = 1; order[++no] = k }
    rate[k] = rate[k] " " $4 / $5
    cli[k] = cli[k] " " $6 / $4 * 1e6
    srv[k] = srv[k] " " $7 / $4 * 1e6
    if ($8 != "") mean[k] = mean[k] " " $8
    if ($9 != "") p99[k] = p99[k] " " $9
  }
  END {
    print "| configuration | tool | ops/s | client CPU s/Mop | server CPU s/Mop | mean µs | p99 µs | kvdrive/peer ops/s | kvdrive/peer client CPU/op | kvdrive/peer server CPU/op |"
    print "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= no; i++) {
      k = order[i]; split(k, kk, SUBSEP); c = kk[1]; t = kk[2]
      if (k in skipped) { printf "| %s | %s | skipped (not found) | | | | | | | |\n", c, t; continue }
      R = med(rate[k]); C = med(cli[k]); S = med(srv[k]); M = med(mean[k]); P = med(p99[k])
      kd = c SUBSEP "kvdrive"
      r1 = r2 = r3 = ""
      if (t != "kvdrive" && (kd in rate)) {
        r1 = sprintf("%.2f", med(rate[kd]) / R); r2 = sprintf("%.2f", med(cli[kd]) / C)
        r3 = sprintf("%.2f", med(srv[kd]) / S)
      } else if (t != "kvdrive") r1 = "n/a (no kvdrive row)"
      printf "| %s | %s | %.0f | %.2f | %.2f | %s | %s | %s | %s | %s |\n", c, t, R, C, S,
        (M == "" ? "n/r" : sprintf("%.0f", M)), (P == "" ? "n/r" : sprintf("%.0f", P)), r1, r2, r3
    }
  }' "$raw")

# The two kvdrive builds' rounds of each configuration through `kvdrive compare --baseline`
# (the baseline's file read by today's kvdrive, its schema upgraded in memory): B = kvdrive,
# A = kvdrive-baseline, each round one run.
ab_table=""
if [[ -n "$baseline" ]]; then
  ab_table="| configuration | op | figure | baseline | kvdrive | kvdrive/baseline | 95 % interval | verdict |"$'\n'"|---|---|---|---:|---:|---:|---|---|"
  for cfg in $(cut -f1 "$work/run_ids.tsv" | awk '!seen[$0]++'); do
    runs=() base_runs=()
    while IFS=$'\t' read -r c t id; do
      [[ $c == "$cfg" ]] || continue
      if [[ $t == kvdrive ]]; then runs+=(--run "$id"); else base_runs+=(--baseline-run "$id"); fi
    done <"$work/run_ids.tsv"
    if ((${#runs[@]} == 0 || ${#base_runs[@]} == 0)); then
      ab_table+=$'\n'"| $cfg | | | | | | | a build recorded no run |"; continue
    fi
    if ! "$kvdrive" compare --db "$work/kvdrive.db" --baseline "$work/kvdrive-baseline.db" \
        "${runs[@]}" "${base_runs[@]}" --keep-client-bound --format json >"$work/ab.json" 2>"$work/ab.err"; then
      ab_table+=$'\n'"| $cfg | | | | | | | compare failed: $(tail -1 "$work/ab.err") |"; continue
    fi
    ab_table+=$'\n'$(jq -r --arg cfg "$cfg" '.comparisons[] | select(.phase == "mixed") |
      (if .unit == "us" then 0.001 else 1 end) as $k |
      def n: if . == null then "" elif $k == 1 then (. | round | tostring) else ((. * $k * 1000 | round) / 1000 | tostring) end;
      "| \($cfg) | \(.op) | \(.figure) | \(.a_median | n) | \(.b_median | n) | \(.ratio * 1000 | round / 1000) | " +
      (if .low == null then "none (too few rounds)" else "\(.low * 1000 | round / 1000) – \(.high * 1000 | round / 1000)" end) +
      " | \(.verdict) |"' "$work/ab.json")
  done
fi

cpu_model=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
{
  echo "# kvdrive vs peers — $(date '+%Y-%m-%d %H:%M %Z')"
  echo
  echo "- Command: \`${command_line% }\` ($(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "- Machine: $(nproc) cores, $cpu_model, kernel $(uname -r), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo) RAM; load average at start $load_start, at end $load_end (shared machine)"
  echo "- Servers: $(redis-server --version | awk '{ print $1, $2, $3 }'), memcached $(memcached -V | awk '{ print $2 }') (-t 4); loopback; ${keys} keys prefilled per value size"
  echo "- Tools: kvdrive ($kvdrive${kvdrive_args:+ $kvdrive_args})${baseline:+, kvdrive-baseline ($baseline${baseline_args:+ $baseline_args})}, memtier_benchmark $(if [[ -n "$memtier" ]]; then echo "$(git -C "$(dirname "$memtier")" describe --tags --always 2>/dev/null || "$memtier" --version 2>/dev/null | awk '{ print $3; exit }') ($memtier)"; else echo skipped; fi), redis-benchmark $(redis-benchmark --version | awk '{ print $2 }'), memcslap (libmemcached $(memcslap --version 2>&1 | sed -n 's/.*libmemcached v\([0-9.]*\).*/\1/p'))"
  echo "- ${duration} s per measurement, ${rounds} rounds in alternation (kvdrive${baseline:+, kvdrive-baseline}, memtier, redis-benchmark/memcslap, repeat); medians over rounds; whole run ${elapsed} s"
  echo "- kvdrive --engine $engine; connection counts: $conns_list (c1: 1 thread; else 2 threads x c/2 connections, for every tool)"
  echo "- At 50 connections: Redis kvdrive --threads 2 --connections 25, memtier --threads 2 --clients 25, redis-benchmark -c 50 --threads 2; memcached unpipelined kvdrive under --engine events as Redis, under classic --threads 50 (one blocking libmemcached connection per thread), pipelined kvdrive --threads 2 --connections 25 --pipeline 16 (buffered sets + one multi-get per connection per round), memtier --threads 2 --clients 25 (--pipeline 16), memcslap -c 50 (50 threads; it cannot pipeline)"
  echo "- Client CPU: /usr/bin/time user+system of the whole process (kvdrive's includes its start, SQLite writes and its once-a-second store-counter polling); server CPU: /proc/PID/stat utime+stime delta over the process"
  echo "- memcslap cannot choose value size, ratio or keys (its values average ~2.6 KB): its rows are sets then gets split S:G, for CPU per op only; it reports no latency (n/r). redis-benchmark: sets and gets as two invocations split S:G; p99 is the larger of the two; its keys are its own (key:%012d, prefilled ~95 %)."
  echo "- Mapping of every flag: bench/README.md"
  echo
  echo "$table"
  echo
  if [[ -n "$ab_table" ]]; then
    echo "kvdrive against the baseline build: \`kvdrive compare --baseline\` over the ${rounds} rounds of each (Hodges-Lehmann ratio, exact Mann-Whitney interval; latency in ms; an effect under 5 % is no difference): docs/reference.md, \"Is B faster than A\"."
    echo
    echo "$ab_table"
    echo
  fi
  echo "<details><summary>raw rows (config, tool, round, ops, seconds, client CPU s, server CPU s, mean µs, p99 µs)</summary>"
  echo
  echo '```'
  cat "$raw"
  echo '```'
  echo "</details>"
} >"$out"
echo "$table"
[[ -z "$ab_table" ]] || printf '\n%s\n' "$ab_table"
echo "driver_vs_peers: wrote $out (${elapsed} s)"
