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
