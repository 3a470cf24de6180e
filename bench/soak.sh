#!/usr/bin/env bash
# Soak (issue 7, "Load"): a long kvdrive run at full speed with kvmon watching the store and
# serving it over TCP, measuring whether kvdrive's and kvmon's memory stay flat.
#
# Usage: bench/soak.sh [--minutes M] [--threads N] [--keys N] [--value-size SIZE] [--ratio S:G]
#                      [--memcached] [--sample S] [--kvdrive PATH] [--kvmon PATH] [--out FILE]
#                      [--rate N] [--keep]
#   --minutes M      length of the mixed phase (default 30; with --memcached each store gets M/2)
#   --threads N      kvdrive worker threads (default 2; keep it small on a shared machine)
#   --keys N         bounded key space, so the store reaches a steady size (default 100k)
#   --value-size S   value size (default 100)
#   --ratio S:G      sets to gets of the mixed phase (default 1:1)
#   --memcached      also run a memcached target (after Redis, same workload)
#   --sample S       seconds between memory samples (default 10)
#   --kvdrive PATH, --kvmon PATH   binaries (default $KV_BUILD_DIR or build/, then driver/, monitor/)
#   --out FILE       the markdown report (default bench/results/soak-<date>.md)
#   --rate N         cap kvdrive at N req/s in total instead of full speed: for runs
#                    longer than kvmon's 1-hour history (whose filling is what grows kvmon's RSS)
#                    on a machine that must stay usable meanwhile
#   --keep           keep the temp dir (databases, logs)
#
# What runs, all on free loopback ports in a temp dir, all stopped on exit (also on Ctrl-C):
#   - redis-server (and memcached with --memcached);
#   - kvmon #1 watching the store(s) at 1 Hz with --listen, writing kvmon.db;
#   - kvdrive: a load phase over the key space, then a mixed phase of --minutes with uniform random
#     keys, no --rate (full speed), `--monitor` pulling kvmon #1's samples over TCP into results.db
#     (per-second rows, histograms, the link and the store-stats poller all run the whole time);
#   - kvmon #2 (the meter): `--pid <kvdrive> --pid <kvmon #1> --pid <redis>` every --sample s into
#     meter.db; the shell also records VmHWM and the database file sizes at the same cadence.
# Prints per program RSS at minute 1, 25 %, 50 %, 75 %, the end, the max, and the slope (least
# squares over the samples after the first minute, KiB per 10 minutes); total ops; file sizes.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
minutes=30 threads=2 keys=100k value_size=100 ratio=1:1 use_memcached=0 sample=10
kvdrive="" kvmon="" out="" keep=0 rate=""
command_line="bench/soak.sh $*"
while (($#)); do
  case $1 in
    --minutes) minutes=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --keys) keys=$2; shift 2 ;;
    --value-size) value_size=$2; shift 2 ;;
    --ratio) ratio=$2; shift 2 ;;
    --memcached) use_memcached=1; shift ;;
    --sample) sample=$2; shift 2 ;;
    --kvdrive) kvdrive=$2; shift 2 ;;
    --kvmon) kvmon=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --rate) rate=$2; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "soak: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ $minutes =~ ^[0-9]+$ ]] && ((minutes >= 2)) ||
  { echo "soak: --minutes must be a whole number >= 2" >&2; exit 2; }
[[ $threads =~ ^[0-9]+$ ]] && ((threads >= 1)) ||
  { echo "soak: --threads must be a whole number >= 1" >&2; exit 2; }
[[ $sample =~ ^[0-9]+$ ]] && ((sample >= 1 && sample <= 60)) ||
  { echo "soak: --sample must be whole seconds, 1 to 60" >&2; exit 2; }
[[ $ratio =~ ^[0-9]+:[0-9]+$ ]] || { echo "soak: --ratio must look like 1:1" >&2; exit 2; }
[[ -z $rate || ( $rate =~ ^[0-9]+$ && $rate -ge 1 ) ]] ||
  { echo "soak: --rate must be a whole number of requests per second >= 1" >&2; exit 2; }
build=${KV_BUILD_DIR:-$root/build}
[[ -n "$kvdrive" ]] || kvdrive=$build/driver/kvdrive
[[ -n "$kvmon" ]] || kvmon=$build/monitor/kvmon
missing=()
for prog in "$kvdrive" "$kvmon" redis-server sqlite3 awk; do
  command -v "$prog" >/dev/null || missing+=("$prog")
done
((use_memcached)) && ! command -v memcached >/dev/null && missing+=(memcached)
if ((${#missing[@]})); then
  echo "soak: missing, nothing was installed: ${missing[*]}" >&2
  exit 1
fi

stamp=$(date +%Y-%m-%dT%H%M)
# The binaries are whatever the build dir holds; note whether the tree was clean when we started.
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')
dirty=$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | wc -l)
if ((dirty)); then dirty=" (the work tree had $dirty modified tracked files at the start)"; else dirty=""; fi
[[ -n "$out" ]] || out="$root/bench/results/soak-$stamp.md"
mkdir -p "$(dirname "$out")"
source "$root/scripts/lib.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/kvbench-soak-XXXXXX")
pids=()
# Stopped in reverse order: the meter and kvdrive before the kvmon they watch, the stores last.
kv_stop_on_exit soak "$work" "$keep"

# --- the stores -------------------------------------------------------------------------------
kv_start_redis "$work"
targets=(--target "redis://127.0.0.1:$redis_port")
watch=(--pid "$redis_pid")
if ((use_memcached)); then
  mc_port=$(kv_free_port)
  memcached -l 127.0.0.1 -p "$mc_port" -U 0 -m 256 >"$work/memcached.log" 2>&1 &
  mc_pid=$!
  pids+=("$mc_pid")
  kv_wait_port "$mc_port" "$work/memcached.log"
  targets+=(--target "memcached://127.0.0.1:$mc_port")
  watch+=(--pid "$mc_pid")
fi
ntargets=$((1 + use_memcached))
phase_s=$((minutes * 60 / ntargets))

# --- kvmon #1: watches the stores, serves them over TCP ----------------------------------------
kvmon_port=$(kv_free_port)
"$kvmon" --db "$work/kvmon.db" "${watch[@]}" --interval 1s --listen "127.0.0.1:$kvmon_port" \
  --log-level warn 2>"$work/kvmon.log" &
kvmon_pid=$!
pids+=("$kvmon_pid")
kv_wait_port "$kvmon_port" "$work/kvmon.log"

# --- kvdrive at full speed ---------------------------------------------------------------------
drive_cmd=("$kvdrive" run --db "$work/results.db" "${targets[@]}" --name soak
           --phases load,mixed --keys "$keys" --value-size "$value_size" --key-pattern uniform
           --ratio "$ratio" --duration "${phase_s}s" --threads "$threads"
           --monitor "127.0.0.1:$kvmon_port" ${rate:+--rate "$rate"})
t0=$(date +%s%6N)
"${drive_cmd[@]}" >"$work/kvdrive.out" 2>"$work/kvdrive.log" &
drive_pid=$!
pids+=("$drive_pid")

# --- the meter: a second kvmon sampling the two programs (and Redis, for reference) ------------
"$kvmon" --db "$work/meter.db" --pid "$drive_pid" --pid "$kvmon_pid" --pid "$redis_pid" \
  --interval "${sample}s" --log-level warn 2>"$work/meter.log" &
meter_pid=$!
pids+=("$meter_pid")

fsize() { stat -c %s "$1" 2>/dev/null || echo 0; }
hwm() { awk '/^VmHWM:/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
echo "soak: kvdrive pid $drive_pid, kvmon pid $kvmon_pid, redis pid $redis_pid; ${minutes} min," \
     "work dir $work" >&2
printf 't_s\tkvdrive_hwm_kib\tkvmon_hwm_kib\tresults_db\tresults_wal\tkvmon_db\tkvmon_wal\n' \
  >"$work/files.tsv"
drive_hwm=0
while kill -0 "$drive_pid" 2>/dev/null; do
  h=$(hwm "$drive_pid"); [[ -n "$h" ]] && drive_hwm=$h
  printf '%d\t%s\t%s\t%d\t%d\t%d\t%d\n' $((($(date +%s%6N) - t0) / 1000000)) "$drive_hwm" \
    "$(hwm "$kvmon_pid")" "$(fsize "$work/results.db")" "$(fsize "$work/results.db-wal")" \
    "$(fsize "$work/kvmon.db")" "$(fsize "$work/kvmon.db-wal")" >>"$work/files.tsv"
  for ((s = 0; s < sample && s < 1000; s++)); do
    kill -0 "$drive_pid" 2>/dev/null || break
    sleep 1
  done
done
drive_status=0
wait "$drive_pid" || drive_status=$?
t1=$(date +%s%6N)
kvmon_hwm=$(hwm "$kvmon_pid")
if ((drive_status != 0)); then
  echo "soak: kvdrive exited with status $drive_status:" >&2
  tail -20 "$work/kvdrive.log" >&2
  exit 1
fi
# kvmon #1's history ring (kept >= 1 h and 3600 ticks, <= 64 MiB): ask for all of it and count
# its ticks and encoded bytes, to tell the ring's growth from anything else.
ring_ticks=0 ring_bytes=0
if timeout 20 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1"; printf "hello v=1\nhistory since_ts_us=0\n" >&3
                       exec sed "/^history_end/q" <&3' _ "$kvmon_port" >"$work/history.txt" 2>/dev/null; then
  ring_ticks=$(grep -c '^tick ' "$work/history.txt" || true)
  ring_bytes=$(awk '/^(proc|host|disk|event|tick) / { b += length($0) + 1 } END { print b + 0 }' \
               "$work/history.txt")
fi
# One more meter tick so the end of kvdrive's run is covered, then stop the meter and kvmon #1.
sleep 1
kill -TERM "$meter_pid"; wait "$meter_pid" || true
kill -TERM "$kvmon_pid"; wait "$kvmon_pid" || { echo "soak: kvmon failed:" >&2; tail "$work/kvmon.log" >&2; }
pids=("$redis_pid" ${mc_pid:+"$mc_pid"})

# --- figures -----------------------------------------------------------------------------------
duration_s=$(((t1 - t0) / 1000000))
total_ops=$(sqlite3 "$work/results.db" "SELECT COALESCE(SUM(ops), 0) FROM driver_seconds")
mixed_ops=$(sqlite3 "$work/results.db" "SELECT COALESCE(SUM(d.ops), 0) FROM driver_seconds d
                                        JOIN phases p USING (phase_id) WHERE p.kind = 'mixed'")
failed=$(sqlite3 "$work/results.db" "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds")
run_status=$(sqlite3 "$work/results.db" "SELECT status FROM runs ORDER BY run_id DESC LIMIT 1")
link_rows=$(sqlite3 "$work/results.db" "SELECT COUNT(*) FROM process_samples")
results_db=$(( $(fsize "$work/results.db") + $(fsize "$work/results.db-wal") ))
kvmon_db=$(( $(fsize "$work/kvmon.db") + $(fsize "$work/kvmon.db-wal") ))

# Per program: RSS at minute 1, 25/50/75 %, end, max; slope after minute 1 (KiB / 10 min).
stats() { # $1 pid, $2 label
  sqlite3 -separator ' ' "$work/meter.db" "
    SELECT (s.ts_us - $t0) / 1e6, s.rss_kib FROM process_samples s
    JOIN process_instances i USING (instance_id)
    WHERE i.pid = $1 AND s.rss_kib IS NOT NULL AND s.ts_us <= $t1 + 2000000 ORDER BY s.ts_us" |
  awk -v label="$2" -v d="$duration_s" '
    { t[NR] = $1; r[NR] = $2; if ($2 > mx) mx = $2
      if ($1 >= 60) { n++; st += $1; sr += $2; stt += $1 * $1; str += $1 * $2 } }
    function at(x,   i, b, bd) { bd = 1e18
      for (i = 1; i <= NR; i++) if ((t[i] - x)^2 < bd) { bd = (t[i] - x)^2; b = i }
      return r[b] }
    END {
      if (NR == 0) { printf "| %s | - | - | - | - | - | - | - | 0 |\n", label; exit }
      slope = (n >= 2 && n * stt - st * st > 0) ? (n * str - st * sr) / (n * stt - st * st) * 600 : 0
      printf "| %s | %d | %d | %d | %d | %d | %d | %+.0f | %d |\n", label, at(60), at(d * 0.25),
             at(d * 0.5), at(d * 0.75), r[NR], mx, slope, NR }'
}
rows=("$(stats "$drive_pid" kvdrive)" "$(stats "$kvmon_pid" "kvmon (#1, --listen)")"
      "$(stats "$redis_pid" "redis-server (the store)")")
samples_of() { # $1 pid: every sample as "t:rss"
  sqlite3 -separator : "$work/meter.db" "
    SELECT CAST((s.ts_us - $t0) / 1e6 AS INTEGER), s.rss_kib FROM process_samples s
    JOIN process_instances i USING (instance_id) WHERE i.pid = $1 AND s.rss_kib IS NOT NULL
    ORDER BY s.ts_us" | tr '\n' ' '
}
files_at() { # $1 seconds: the files.tsv line nearest
  awk -F'\t' -v x="$1" 'NR > 1 { d = ($1 - x)^2; if (!seen || d < bd) { bd = d; b = $0; seen = 1 } }
                        END { print b }' "$work/files.tsv"
}
mib() { awk -v b="$1" 'BEGIN { printf "%.1f MiB", b / 1048576 }'; }
files_line() { # $1 label, $2 tsv line
  awk -F'\t' -v l="$1" '{ printf "| %s (%d s) | %.1f | %.1f | %.1f | %.1f |\n", l, $1,
    $4 / 1048576, $5 / 1048576, $6 / 1048576, $7 / 1048576 }' <<<"$2"
}

header="| program | RSS KiB at 1 min | 25 % | 50 % | 75 % | end | max | slope KiB/10 min (after 1 min) | samples |"
sep="|---|---|---|---|---|---|---|---|---|"
cpu_model=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
report=$(
  echo "# Soak: kvdrive + kvmon for $minutes minutes at ${rate:+$rate req/s, not }full speed, $(date '+%Y-%m-%d %H:%M %Z')"
  echo
  echo "- command: \`$command_line\`"
  echo "- kvdrive: \`${drive_cmd[*]/#$work\//}\` (pid $drive_pid)"
  echo "- kvmon #1: \`kvmon --db kvmon.db ${watch[*]} --interval 1s --listen 127.0.0.1:$kvmon_port\`"
  echo "- meter: a second kvmon, \`--pid <kvdrive> --pid <kvmon #1> --pid <redis> --interval ${sample}s\`"
  echo "- build: git $rev$dirty (the tree at the start; the binaries are what the build dir held), $("$kvdrive" --version 2>/dev/null | head -1)"
  echo "- machine: $(nproc) CPUs, $cpu_model, kernel $(uname -r), $(awk '/^MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo) RAM, load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "- run: ${duration_s} s, $total_ops ops ($mixed_ops in the mixed phase, $(awk -v o="$mixed_ops" -v s="$phase_s" 'BEGIN { printf "%.0f", o / (s * 1.0) }') req/s; failed $failed), run status $run_status; $link_rows process samples pulled over the link"
  echo
  echo "$header"
  echo "$sep"
  printf '%s\n' "${rows[@]}"
  echo
  echo "VmHWM at the end: kvdrive $drive_hwm KiB, kvmon #1 $kvmon_hwm KiB."
  echo
  echo "kvmon #1's history ring at the end: $ring_ticks ticks, $(mib "$ring_bytes") of encoded lines"
  echo "($((ring_ticks > 0 ? ring_bytes / ring_ticks : 0)) bytes a tick); it keeps at least 3600 ticks and an hour, so at 1 Hz it"
  echo "grows for the first hour and then evicts a tick for each one added."
  echo
  echo "Database files (MiB) during the run:"
  echo
  echo "| when | results.db | results.db-wal | kvmon.db | kvmon.db-wal |"
  echo "|---|---|---|---|---|"
  files_line "minute 1" "$(files_at 60)"
  files_line "50 %" "$(files_at $((duration_s / 2)))"
  files_line "end" "$(tail -1 "$work/files.tsv")"
  echo
  echo "At the end: results file $(mib "$results_db") (db + WAL), kvmon.db $(mib "$kvmon_db")."
  echo
  echo "RSS samples (s:KiB), kvdrive: $(samples_of "$drive_pid")"
  echo
  echo "RSS samples (s:KiB), kvmon #1: $(samples_of "$kvmon_pid")"
)
printf '%s\n' "$report" >"$out"
echo "$header"
echo "$sep"
printf '%s\n' "${rows[@]}"
echo "soak: kvmon history ring $ring_ticks ticks, $(mib "$ring_bytes") encoded"
echo "soak: ${duration_s} s, $total_ops ops (mixed $mixed_ops, failed $failed), results file" \
     "$(mib "$results_db"), kvmon.db $(mib "$kvmon_db"); report written to $out"
