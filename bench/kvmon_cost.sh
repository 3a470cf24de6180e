#!/usr/bin/env bash
# What kvmon itself costs: CPU per sample, % of one core and peak RSS at 1, 10 and 100 Hz with
# one and with three targets, next to `pidstat -rudwh -p PIDS 1` (sysstat; CPU, memory, I/O,
# context switches: what kvmon samples) and plain `pidstat -p PIDS 1` (CPU only) watching the
# same processes in the same run. Also kvmon's sampling jitter (ts_us - scheduled_ts_us).
#
# Usage: bench/kvmon_cost.sh [--duration S] [--rates "1 10 100"] [--kvmon PATH] [--out FILE]
#                            [--no-pidstat] [--host-every-tick] [--scrape] [--keep]
#                            [--kvmon-args "ARGS"]
#   --duration S   seconds measured per configuration (default 30; six configurations, so the
#                  whole script takes about 6 x (S + 4) s)
#   --rates LIST   sampling rates in Hz (default "1 10 100")
#   --kvmon PATH   the kvmon binary (default $KV_BUILD_DIR or build/, then monitor/kvmon)
#   --out FILE     the markdown report (default bench/results/kvmon_cost-<date>.md)
#   --host-every-tick  also read the host's files every tick (--host-interval = --interval;
#                  by default kvmon reads them once a second at rates above 1 Hz)
#   --scrape       also serve --metrics on a free port and scrape it once a second with curl
#                  while measuring (kvmon's CPU includes serving the page; curl's is not counted)
#   --keep         keep the temp dir (databases, logs)
#   --kvmon-args "ARGS"  more kvmon options, split on spaces (e.g. "--host-interval 1h" to see
#                  what the host files cost; they are named in the report)
#
# Starts a redis-server, a memcached and a second redis-server on free loopback ports in a temp
# dir (installs nothing: says what is missing). CPU is read from /proc/PID/task/*/schedstat
# (nanoseconds on the CPU, all threads) at the start and end of the measured window, so startup
# is left out; /proc/PID/stat utime+stime (10 ms ticks) is shown as a coarse cross-check. Peak
# RSS is VmHWM. Keep the machine otherwise quiet while it runs.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
duration=30 rates="1 10 100" kvmon="" out="" keep=0 use_pidstat=1 host_every_tick=0 scrape=0
kvmon_args=""
command_line="$0 $*"
while (($#)); do
  case "$1" in
    --duration) duration=$2; shift 2 ;;
    --rates) rates=$2; shift 2 ;;
    --kvmon) kvmon=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --kvmon-args) kvmon_args=$2; shift 2 ;;
    --no-pidstat) use_pidstat=0; shift ;;
    --host-every-tick) host_every_tick=1; shift ;;
    --scrape) scrape=1; shift ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "kvmon_cost: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$duration" =~ ^[0-9]+$ ]] && ((duration >= 3)) ||
  { echo "kvmon_cost: --duration must be a whole number of seconds >= 3" >&2; exit 2; }
if [[ -z "$kvmon" ]]; then kvmon=${KV_BUILD_DIR:-$root/build}/monitor/kvmon; fi

missing=()
[[ -x "$kvmon" ]] || missing+=("kvmon at $kvmon (build it: scripts/build.sh -- kvmon, or pass --kvmon)")
for prog in redis-server memcached sqlite3 awk; do
  command -v "$prog" >/dev/null || missing+=("$prog (Debian package: ${prog/awk/mawk})")
done
((scrape)) && ! command -v curl >/dev/null && missing+=("curl (Debian package: curl)")
((use_pidstat)) && ! command -v pidstat >/dev/null && missing+=("pidstat (Debian package: sysstat)")
if ((${#missing[@]})); then
  echo "kvmon_cost: missing, nothing was installed:" >&2
  printf '  - %s\n' "${missing[@]}" >&2
  exit 1
fi
[[ -r /proc/self/schedstat ]] ||
  { echo "kvmon_cost: /proc/PID/schedstat is missing (kernel without CONFIG_SCHED_INFO)" >&2; exit 1; }

stamp=$(date +%Y-%m-%dT%H%M)
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
[[ -n "$out" ]] || out="$root/bench/results/kvmon_cost-$stamp.md"
mkdir -p "$(dirname "$out")"
work=$(mktemp -d "${TMPDIR:-/tmp}/kvmon-cost-XXXXXX")
pids=()
cleanup() {
  local status=$?
  trap - EXIT INT TERM
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if ((keep)); then echo "kvmon_cost: kept $work" >&2; else rm -rf "$work"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

source "$(cd "$(dirname "$0")/.." && pwd)/scripts/lib.sh"
free_port() { kv_free_port; }
wait_port() { kv_wait_port "$1" || { echo "kvmon_cost: logs in $work" >&2; return 1; }; }

# Nanoseconds on the CPU of all live threads of $1.
cpu_ns() { cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {printf "%d", s}'; }
# utime + stime of $1 in clock ticks (the whole thread group, 10 ms resolution).
cpu_ticks() { awk '{sub(/.*\) /, ""); print $12 + $13}' /proc/"$1"/stat; }
hwm_kib() { awk '/^VmHWM:/ {print $2}' /proc/"$1"/status; }
now_us() { date +%s%6N; }

# --- the targets -----------------------------------------------------------------------------
start_redis() {  # $1: name; sets redis_pid and redis_port
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$work" --dbfilename "$1.rdb" \
    --save "" --appendonly no --daemonize no >"$work/$1.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
}
start_redis redis1
redis1_pid=$redis_pid redis1_port=$redis_port
start_redis redis2
redis2_pid=$redis_pid redis2_port=$redis_port
memcached_port=$(free_port)
memcached_user=()
[[ $(id -u) -eq 0 ]] && memcached_user=(-u root)
memcached -p "$memcached_port" -l 127.0.0.1 -U 0 -m 64 "${memcached_user[@]}" \
  >"$work/memcached.log" 2>&1 &
memcached_pid=$!
pids+=("$memcached_pid")
wait_port "$redis1_port"
wait_port "$redis2_port"
wait_port "$memcached_port"
echo "kvmon_cost: redis-server pid $redis1_pid (:$redis1_port), memcached pid $memcached_pid" \
     "(:$memcached_port), redis-server pid $redis2_pid (:$redis2_port); work dir $work"

# pidstat report lines per pid of file $1 stamped in [$2, $3) (µs since the epoch); $4: pids.
count_reports() {
  awk -v a="$(date -d "@$(($2 / 1000000))" +%T)" -v b="$(date -d "@$(($3 / 1000000))" +%T)" \
    -v n="$4" 'function sod(t, f) { split(t, f, ":"); return f[1] * 3600 + f[2] * 60 + f[3] }
    BEGIN { a = sod(a); b = sod(b) }
    $1 ~ /^[0-9][0-9]:[0-9][0-9]:[0-9][0-9]$/ && $3 ~ /^[0-9]+$/ {
      t = sod($1); if ((a <= b && t >= a && t < b) || (a > b && (t >= a || t < b))) c++ }
    END {printf "%d", c / n}' "$1"
}

# --- one configuration ------------------------------------------------------------------------
rows=()
goal_notes=()
measure() {  # $1: rate in Hz, $2...: target pids
  local hz=$1; shift
  local targets=("$@") n=$#
  local tag="${hz}hz-${n}t" interval_ms
  interval_ms=$(awk -v hz="$hz" 'BEGIN {printf "%g", 1000 / hz}')
  local db="$work/$tag.db" args=()
  for p in "${targets[@]}"; do args+=(--pid "$p"); done
  ((host_every_tick)) && args+=(--host-interval "${interval_ms}ms")
  local extra=()
  read -r -a extra <<<"$kvmon_args"
  args+=("${extra[@]}")
  local mport=""
  if ((scrape)); then mport=$(free_port); args+=(--metrics "127.0.0.1:$mport"); fi
  "$kvmon" --db "$db" "${args[@]}" --interval "${interval_ms}ms" --log-level warn \
    2>"$work/$tag.kvmon.log" &
  local kpid=$!
  pids+=("$kpid")
  if ((scrape)); then
    wait_port "$mport"
    (while :; do curl -sf -o /dev/null "http://127.0.0.1:$mport/metrics" || exit 1; sleep 1; done) &
    local spid=$!
    pids+=("$spid")
  fi
  local ppid="" qpid=""
  if ((use_pidstat)); then
    LC_ALL=C S_TIME_FORMAT= pidstat -rudwh -p "$(IFS=,; echo "${targets[*]}")" 1 >"$work/$tag.pidstat.txt" 2>&1 &
    ppid=$!
    pids+=("$ppid")
    LC_ALL=C S_TIME_FORMAT= pidstat -p "$(IFS=,; echo "${targets[*]}")" 1 >"$work/$tag.pidstat-plain.txt" 2>&1 &
    qpid=$!
    pids+=("$qpid")
  fi
  sleep 2  # past startup (schema, first resolution, pidstat's first report)
  local t0 k0 kt0 p0=0 pt0=0 t1 k1 kt1 p1=0 pt1=0 khwm phwm=0
  t0=$(now_us); k0=$(cpu_ns "$kpid"); kt0=$(cpu_ticks "$kpid")
  local q0=0 q1=0
  [[ -n "$ppid" ]] && { p0=$(cpu_ns "$ppid"); pt0=$(cpu_ticks "$ppid"); q0=$(cpu_ns "$qpid"); }
  sleep "$duration"
  t1=$(now_us); k1=$(cpu_ns "$kpid"); kt1=$(cpu_ticks "$kpid"); khwm=$(hwm_kib "$kpid")
  [[ -n "$ppid" ]] && { p1=$(cpu_ns "$ppid"); pt1=$(cpu_ticks "$ppid"); phwm=$(hwm_kib "$ppid"); q1=$(cpu_ns "$qpid"); }
  if ((scrape)); then kill -TERM "$spid"; wait "$spid" 2>/dev/null || true; fi
  kill -TERM "$kpid"
  wait "$kpid" || { echo "kvmon_cost: kvmon failed:" >&2; cat "$work/$tag.kvmon.log" >&2; exit 1; }
  if [[ -n "$ppid" ]]; then
    kill -TERM "$ppid" "$qpid"; wait "$ppid" 2>/dev/null || true; wait "$qpid" 2>/dev/null || true
  fi

  # Ticks in the window, and the jitter of every process sample of the run (µs).
  local ticks jitter preports=0 qreports=0
  ticks=$(sqlite3 "$db" "SELECT COUNT(DISTINCT scheduled_ts_us) FROM process_samples WHERE scheduled_ts_us >= $t0 AND scheduled_ts_us < $t1")
  jitter=$(sqlite3 -separator ' ' "$db" "
    WITH j AS (SELECT ts_us - scheduled_ts_us AS d FROM process_samples),
         n AS (SELECT COUNT(*) AS c FROM j)
    SELECT (SELECT d FROM j ORDER BY d LIMIT 1 OFFSET (SELECT (c - 1) / 2 FROM n)),
           (SELECT d FROM j ORDER BY d LIMIT 1 OFFSET (SELECT CAST((c - 1) * 0.99 AS INTEGER) FROM n)),
           (SELECT MAX(d) FROM j), (SELECT c FROM n)")
  if [[ -n "$ppid" ]]; then  # report lines (one per pid) stamped inside the window
    preports=$(count_reports "$work/$tag.pidstat.txt" "$t0" "$t1" "$n")
    qreports=$(count_reports "$work/$tag.pidstat-plain.txt" "$t0" "$t1" "$n")
  fi
  local dropped
  dropped=$(sqlite3 "$db" "SELECT COUNT(*) FROM events WHERE kind IN ('samples_dropped','ticks_skipped')")
  local row
  row=$(awk -v hz="$hz" -v n="$n" -v span_us=$((t1 - t0)) -v ticks="$ticks" \
      -v kns=$((k1 - k0)) -v kticks=$((kt1 - kt0)) -v khwm="$khwm" \
      -v pns=$((p1 - p0)) -v pticks=$((pt1 - pt0)) -v phwm="$phwm" -v prep="$preports" \
      -v qns=$((q1 - q0)) -v qrep="$qreports" \
      -v jit="$jitter" -v dropped="$dropped" -v clk="$(getconf CLK_TCK)" 'BEGIN {
    split(jit, j, " ")
    span_s = span_us / 1e6
    k_per = ticks > 0 ? kns / 1000 / ticks : 0
    k_pct = kns / 1e9 / span_s * 100
    k_tick_pct = kticks / clk / span_s * 100
    p_per = prep > 0 ? pns / 1000 / prep : 0
    p_pct = pns / 1e9 / span_s * 100
    ratio = p_per > 0 ? sprintf("%.2f", k_per / p_per) : "-"
    q_per = qrep > 0 ? qns / 1000 / qrep : 0
    qratio = q_per > 0 ? sprintf("%.2f", k_per / q_per) : "-"
    printf "| %s Hz | %d | %d | %.1f | %.4f %% (%.2f %%) | %.1f | %s | %.1f | %.4f %% | %.1f | %s | %.1f | %s | %d / %d / %d | %d |\n",
      hz, n, ticks, k_per, k_pct, k_tick_pct, khwm / 1024, prep, p_per, p_pct, phwm / 1024,
      ratio, q_per, qratio, j[1], j[2], j[3], dropped
    # goals: machine-readable on a second line
    printf "GOAL %s %s %.6f %.1f %.3f %.3f\n", hz, n, k_pct, khwm / 1024, k_per, p_per
  }')
  rows+=("$(head -1 <<<"$row")")
  goal_notes+=("$(tail -1 <<<"$row")")
  echo "$(head -1 <<<"$row")"
}

header="| rate | targets | ticks | kvmon µs/sample | kvmon % of a core (ticks) | kvmon peak RSS MiB | pidstat reports | pidstat µs/report | pidstat % of a core | pidstat peak RSS MiB | kvmon/pidstat per sample | plain pidstat µs/report | kvmon/plain pidstat | jitter p50 / p99 / max µs | drop events |"
sep="|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
echo "$header"
echo "$sep"
for hz in $rates; do
  measure "$hz" "$redis1_pid"
  measure "$hz" "$redis1_pid" "$memcached_pid" "$redis2_pid"
done

# --- goals and the report ---------------------------------------------------------------------
verdicts=()
for g in "${goal_notes[@]}"; do
  read -r _ hz n pct rss kper pper <<<"$g"
  v=$(awk -v hz="$hz" -v pct="$pct" -v rss="$rss" -v kper="$kper" -v pper="$pper" 'BEGIN {
    s = ""
    if (hz == 1 && pct >= 0.05) s = s " CPU over 0.05 %;"
    if (hz == 10 && pct >= 0.5) s = s " CPU over 0.5 %;"
    if (rss >= 16) s = s " RSS over 16 MiB;"
    if (pper > 0 && kper >= pper) s = s " more CPU per sample than pidstat;"
    # #20: at most 0.2x pidstat per sample at 1 Hz, 0.1x at 10 Hz (one target)
    if (pper > 0 && hz == 1 && kper > 0.2 * pper) s = s sprintf(" over 0.2x pidstat (%.2fx);", kper / pper)
    if (pper > 0 && hz == 10 && kper > 0.1 * pper) s = s sprintf(" over 0.1x pidstat (%.2fx);", kper / pper)
    print s == "" ? "met" : "MISSED:" s }')
  verdicts+=("- $hz Hz, $n target(s): $v")
done
printf '%s\n' "${verdicts[@]}"

cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
fs_type=$(df -T "$work" | awk 'NR == 2 {print $2}')
{
  echo "# kvmon cost, $(date '+%Y-%m-%d %H:%M %Z')"
  echo
  echo "- command: \`$command_line\`"
  echo "- kvmon: \`$kvmon${kvmon_args:+ $kvmon_args}\` ($("$kvmon" --version 2>/dev/null | head -1); git $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?'))"
  echo "- machine: $(nproc) CPUs, $cpu_model, kernel $(uname -r), $(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM, load average before the run: $load_before, after: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- results files on $fs_type; targets: idle redis-server $(redis-server --version | awk '{print $3}' | cut -d= -f2), memcached $(memcached -V | awk '{print $2}'), second redis-server; $duration s measured per row"
  echo "- pidstat: \`pidstat -rudwh -p PIDS 1\` ($(pidstat -V 2>&1 | head -1)) and plain \`pidstat -p PIDS 1\` (CPU only) watching the same targets in the same run; pidstat cannot sample faster than 1 s, so compare per sample"
  echo
  echo "$header"
  echo "$sep"
  printf '%s\n' "${rows[@]}"
  echo
  echo "CPU: /proc/PID/task/*/schedstat (ns on CPU, all threads) over the measured window;"
  echo "in brackets utime+stime from /proc/PID/stat ($(getconf CLK_TCK) ticks/s, coarse). A kvmon sample"
  if ((host_every_tick)); then host_note="on every tick (--host-interval = --interval)"
  else host_note="once a second (kvmon's default --host-interval: the interval, at least 1 s)"; fi
  echo "is one tick: every target, the host (load, meminfo, vmstat, stat, PSI, diskstats) read"
  echo "$host_note, and its share of the SQLite transactions (one per --flush-interval);"
  echo "a pidstat report covers the targets only. Jitter: ts_us - scheduled_ts_us"
  echo "of every process sample. Drop events: samples_dropped and ticks_skipped rows."
  echo
  echo "Goals (1 Hz < 0.05 % of a core, 10 Hz < 0.5 %, RSS < 16 MiB, less CPU per sample than pidstat; #20: <= 0.2x pidstat -rudwh per sample at 1 Hz, <= 0.1x at 10 Hz):"
  echo
  printf '%s\n' "${verdicts[@]}"
} >"$out"
echo "kvmon_cost: report written to $out"
