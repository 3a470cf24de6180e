// Finding a library's sockets among this process's open files, for a library that does not
// hand out its descriptors (libmemcached), so interrupt() can shut them down.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace kv::drive {

// The descriptors in /proc/self/fd of this process's TCP sockets whose (local port, peer port)
// is one of `ends` (host byte order). Costs a directory listing and two calls per open file:
// for after a (re)connect, not per request. Empty when `ends` is.
std::vector<int> sockets_by_ports(const std::vector<std::pair<uint16_t, uint16_t>>& ends);

}  // namespace kv::drive
