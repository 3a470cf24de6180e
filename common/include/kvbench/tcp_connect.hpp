// The one non-blocking TCP connect behind every hand-written client socket (kvdrive's kvmon
// link, the store-stats poller, memcached's requests on a connection of their own).
#pragma once

#include <netdb.h>

#include <cstdint>
#include <string>

#include "kvbench/result.hpp"

namespace kv {

// Opens a socket for `ai` (close-on-exec, non-blocking, and left non-blocking) and connects
// it, waiting until `deadline_us` (on steady_us()'s clock) for the connect to finish. The fd
// (the caller closes it), or why not: "timed out", or the system's text for the failure.
Result<int> tcp_connect_address(const addrinfo& ai, int64_t deadline_us);

// Resolves host:port (AF_UNSPEC, SOCK_STREAM) and tries each address in turn until one
// connects, all before `deadline_us`. Error: "cannot resolve HOST:PORT: why", or the last
// address's reason as above.
Result<int> tcp_connect(const std::string& host, int port, int64_t deadline_us);

}  // namespace kv
