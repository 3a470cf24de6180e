# Shell helpers shared by kvbench's scripts (demo, benchmarks, package test). Source it.

# A loopback TCP port nothing listens on, below the kernel's ephemeral range (32768-60999) so an
# outgoing connection cannot take it between the check and the server's bind.
kv_free_port() {
  local p
  for _ in $(seq 500); do
    p=$((20000 + RANDOM % 12000))
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
  done
  echo "no free port found" >&2
  return 1
}

# Waits up to 10 s for something to accept on 127.0.0.1:PORT; on failure prints the tail of LOG.
# Usage: kv_wait_port PORT [LOG]
kv_wait_port() {
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing came up on port $1${2:+ (last lines of $2:)}" >&2
  [[ -n "${2:-}" && -f "$2" ]] && tail -5 "$2" >&2
  return 1
}

# For scripts that start servers: append each pid to the array `pids`. After
# `kv_stop_on_exit NAME WORK [KEEP]`, exit (also Ctrl-C) stops them, the last started first,
# waits for them and removes WORK, unless KEEP is 1 or the script is failing (then it says where
# WORK is).
kv_stop_on_exit() {
  kv_exit_name=$1 kv_exit_work=$2 kv_exit_keep=${3:-0}
  trap kv_stop_all EXIT
  trap 'exit 130' INT TERM
}
kv_stop_all() {
  local status=$? i p
  trap - EXIT INT TERM
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do kill -TERM "${pids[i]}" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  if [[ $kv_exit_keep == 1 || $status != 0 ]]; then
    echo "$kv_exit_name: kept $kv_exit_work" >&2
  else
    rm -rf "$kv_exit_work"
  fi
  exit "$status"
}

# A redis-server without persistence on a free loopback port, its files in WORK; sets redis_port
# and redis_pid, appends it to `pids` and waits until it accepts. Usage: kv_start_redis WORK
kv_start_redis() {
  redis_port=$(kv_free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --dir "$1" --save "" --appendonly no \
    >"$1/redis.log" 2>&1 &
  redis_pid=$!
  pids+=("$redis_pid")
  kv_wait_port "$redis_port" "$1/redis.log"
}
