#!/usr/bin/env bash
# Renders every report of a few results files with two kvdrive builds and diffs them: a change
# to report/ or view/ that should not change what the reports say must come out byte-identical.
# The files are made once, by the OLD build (the newer one reads an older file; not the other
# way): two monitored runs (load, read, mixed; rate mode with a warm-up; a BGSAVE with Redis's
# latency monitor on), a scenario, a capacity search, a --processes group and a store killed
# mid-run. Each file is rendered as text (two percentile lists), JSON, every CSV table and HTML,
# per run and whole, plus the group's reports and two- and three-run comparisons.
# Usage: scripts/report-diff.sh OLD_KVDRIVE NEW_KVDRIVE [--keep DIR]
#   (KVMON: the kvmon to watch the stores, default build/monitor/kvmon)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
keep="" old="" new=""
while (($#)); do
  case "$1" in
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) if [[ -z $old ]]; then old=$1; elif [[ -z $new ]]; then new=$1; else
         echo "report-diff: unexpected argument '$1'" >&2; exit 2; fi; shift ;;
  esac
done
[[ -x $old && -x $new ]] || { echo "report-diff: need two kvdrive binaries (see --help)" >&2; exit 2; }
kvmon=${KVMON:-$root/build/monitor/kvmon}
[[ -x $kvmon ]] || { echo "report-diff: no kvmon at $kvmon (set KVMON)" >&2; exit 2; }
source "$root/scripts/lib.sh"
work=${keep:-$(mktemp -d "${TMPDIR:-/tmp}/kvbench-report-diff-XXXXXX")}
mkdir -p "$work/db"
pids=()
kv_stop_on_exit report-diff "$work" "$([[ -n $keep ]] && echo 1 || echo 0)"

memcached_user=()
[[ $(id -u) -eq 0 ]] && memcached_user=(-u root)
kv_start_redis "$work"
mc_port=$(kv_free_port)
memcached -p "$mc_port" -l 127.0.0.1 -U 0 -m 256 "${memcached_user[@]}" >"$work/mc.log" 2>&1 &
pids+=($!)
kv_wait_port "$mc_port" "$work/mc.log"
kp=$(kv_free_port)
# kvmon writes a file of its own: a newer kvmon would migrate a.db past what OLD can open (the
# runs pull its samples over --monitor all the same).
"$kvmon" --db "$work/kvmon.db" --pid "$redis_pid" --pid "${pids[-1]}" --interval 250ms \
  --listen "127.0.0.1:$kp" 2>"$work/kvmon.log" &
kvmon_pid=$!
pids+=("$kvmon_pid")
sleep 1.5
R=redis://127.0.0.1:$redis_port MC=memcached://127.0.0.1:$mc_port
run() { "$old" run "$@" >>"$work/runs.log" 2>&1; }
echo "report-diff: making the results files with $old" >&2
run --db "$work/db/a.db" --name one --target "$R" --target "$MC" --keys 20k --threads 2 \
  --phases load,read,mixed --duration 2s --monitor "127.0.0.1:$kp"
run --db "$work/db/a.db" --name two --target "$R" --target "$MC" --keys 20k --threads 2 \
  --phases load,mixed --duration 2s --rate 5000 --pipeline 4 --warmup 500ms --monitor "127.0.0.1:$kp"
run --db "$work/db/b.db" --scenario parallel-writers --target "$R" --target "$MC"
run --db "$work/db/c.db" --target "$R" --keys 10k --search --slo p99=2ms --search-start 2000 \
  --search-max 40000 --duration 1s --monitor "127.0.0.1:$kp" || true  # a step may fail
run --db "$work/db/d.db" --target "$MC" --keys 10k --processes 2 --phases load,mixed --duration 2s
dying_port=$(kv_free_port)
memcached -p "$dying_port" -l 127.0.0.1 -U 0 -m 64 "${memcached_user[@]}" >"$work/mc2.log" 2>&1 &
dying=$!
kv_wait_port "$dying_port" "$work/mc2.log"
(sleep 2; kill "$dying") &
run --db "$work/db/e.db" --target "memcached://127.0.0.1:$dying_port" --keys 10k \
  --phases load,mixed --duration 4s --give-up-after 2s || true  # fails, as it should
redis-cli -p "$redis_port" config set latency-monitor-threshold 1 >/dev/null
(sleep 1.5; redis-cli -p "$redis_port" bgsave >/dev/null) &
run --db "$work/db/a.db" --name three --target "$R" --keys 50k --value-size 1000 --threads 2 \
  --phases load,mixed --duration 3s --monitor "127.0.0.1:$kp"
sleep 1.2
kill -TERM "$kvmon_pid"
wait "$kvmon_pid" || true

tables=$("$new" report --help | sed -n 's/.*the one table to print (\(.*\))/\1/p' | tr -d ,)
render() {  # render KVDRIVE OUT
  local k=$1 o=$2 f b r t g
  mkdir -p "$o"
  for src in "$work"/db/*.db; do
    b=$(basename "$src" .db)
    f=$work/copy-$b.db
    cp "$src" "$f"  # opening a file may upgrade it: each build reads its own copy
    "$k" report --db "$f" >"$o/$b.txt" 2>&1 || true
    for r in $(sqlite3 "$f" "SELECT run_id FROM runs ORDER BY run_id"); do
      "$k" report --db "$f" --run "$r" >"$o/$b.$r.txt" 2>&1 || true
      "$k" report --db "$f" --run "$r" --percentiles 50,99.99 >"$o/$b.$r.p.txt" 2>&1 || true
      "$k" report --db "$f" --run "$r" --format json >"$o/$b.$r.json" 2>&1 || true
      "$k" report --db "$f" --run "$r" --html "$o/$b.$r.html" >/dev/null 2>&1 || true
      for t in $tables; do
        "$k" report --db "$f" --run "$r" --format csv "$t" >"$o/$b.$r.$t.csv" 2>&1 || true
      done
    done
    "$k" report --db "$f" --format json >"$o/$b.json" 2>&1 || true
    "$k" report --db "$f" --html "$o/$b.html" >/dev/null 2>&1 || true
    for g in $(sqlite3 "$f" "SELECT DISTINCT run_group FROM runs WHERE run_group IS NOT NULL"); do
      "$k" report --db "$f" --group "$g" >"$o/$b.group.txt" 2>&1 || true
      "$k" report --db "$f" --group "$g" --html "$o/$b.group.html" >/dev/null 2>&1 || true
    done
  done
  f=$work/copy-a.db
  "$k" report --db "$f" --run 1 --run 2 >"$o/compare.txt" 2>&1 || true
  "$k" report --db "$f" --run 3 --run 1 --run 2 --percentiles 50,99.9 >"$o/compare3.txt" 2>&1 || true
  "$k" report --db "$f" --run 1 --run 2 --format json >"$o/compare.json" 2>&1 || true
  "$k" report --db "$f" --run 1 --run 2 --format csv comparison >"$o/compare.csv" 2>&1 || true
  "$k" report --db "$f" --run 1 --run 2 --html "$o/compare.html" >/dev/null 2>&1 || true
  rm -f "$work"/copy-*.db*
}
render "$old" "$work/old"
render "$new" "$work/new"
n=$(find "$work/new" -type f | wc -l)
if diff -r "$work/old" "$work/new" >"$work/diff.txt"; then
  echo "report-diff: $n reports, all identical"
else
  echo "report-diff: $n reports, these differ (diff -r in $work/diff.txt):"
  diff -rq "$work/old" "$work/new" | sed 's/^/  /'
  kv_exit_keep=1
  exit 1
fi
