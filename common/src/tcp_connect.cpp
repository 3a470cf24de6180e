#include "kvbench/tcp_connect.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include "kvbench/clock.hpp"

namespace kv {

Result<int> tcp_connect_address(const addrinfo& ai, int64_t deadline_us) {
  int fd = ::socket(ai.ai_family, ai.ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai.ai_protocol);
  if (fd < 0) return Error{std::strerror(errno)};
  auto fail = [fd](int err) {
    ::close(fd);
    return Error{std::strerror(err)};
  };
  if (::connect(fd, ai.ai_addr, ai.ai_addrlen) == 0) return fd;
  if (errno != EINPROGRESS) return fail(errno);
  for (;;) {
    const int64_t left = deadline_us - steady_us();
    if (left <= 0) {
      ::close(fd);
      return Error{"timed out"};
    }
    pollfd p{fd, POLLOUT, 0};
    const int n = ::poll(&p, 1, static_cast<int>((left + 999) / 1000));
    if (n > 0) break;
    if (n < 0 && errno != EINTR) return fail(errno);
  }
  int err = 0;
  socklen_t len = sizeof err;
  if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) return fail(errno);
  if (err != 0) return fail(err);
  return fd;
}

Result<int> tcp_connect(const std::string& host, int port, int64_t deadline_us) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &list); rc != 0)
    return Error{"cannot resolve " + host + ":" + service + ": " + gai_strerror(rc)};
  std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(list, ::freeaddrinfo);
  std::string last = "no address";
  for (const addrinfo* ai = list; ai != nullptr; ai = ai->ai_next) {
    auto fd = tcp_connect_address(*ai, deadline_us);
    if (fd) return fd;
    last = fd.error().message;
  }
  return Error{last};
}

}  // namespace kv
