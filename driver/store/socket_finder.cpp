#include "store/socket_finder.hpp"

#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>

namespace kv::drive {

std::vector<int> sockets_by_ports(const std::vector<std::pair<uint16_t, uint16_t>>& ends) {
  std::vector<int> fds;
  if (ends.empty()) return fds;
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return fds;
  auto port_of = [](const sockaddr_storage& a) -> in_port_t {
    if (a.ss_family == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port);
    if (a.ss_family == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port);
    return 0;
  };
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    int fd = std::atoi(e->d_name);
    sockaddr_storage local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0 ||
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0)
      continue;
    for (auto [l, p] : ends) {
      if (port_of(local) == l && port_of(peer) == p) fds.push_back(fd);
    }
  }
  closedir(dir);
  return fds;
}

}  // namespace kv::drive
