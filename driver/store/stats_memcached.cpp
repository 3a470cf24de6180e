// The store-stats poller's source for a memcached server over plain TCP (stats_sources.hpp).
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "kvbench/clock.hpp"
#include "kvbench/result.hpp"
#include "kvbench/tcp_connect.hpp"
#include "kvbench/text_fields.hpp"
#include "store/stats_parsers.hpp"
#include "store/stats_sources.hpp"

namespace kv::drive {
namespace {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

// Waits until fd is ready for `events` or the deadline passes.
Result<void> wait_fd(int fd, short events, int64_t deadline) {
  for (;;) {
    int64_t left = deadline - steady_us();
    if (left <= 0) return Error{"no reply within the timeout"};
    pollfd p{fd, events, 0};
    int n = ::poll(&p, 1, static_cast<int>((left + 999) / 1000));
    if (n > 0) return {};
    if (n < 0 && errno != EINTR) return Error{std::string("poll: ") + std::strerror(errno)};
  }
}

// memcached over a plain socket: "stats\r\n" gives every counter under the server's own name,
// whatever the server version, parsed by the same function the unit tests check. libmemcached's
// memcached_stat() maps replies onto a fixed struct (newer counters are lost), and its server
// state (retry timeouts, dead-server marking) would get between a failed poll and the next
// tick's fresh connection. One deadline bounds connect, send and receive together.
class MemcachedSource final : public StatsSource {
 public:
  explicit MemcachedSource(const HostPort& server) : server_(server) {}

  Result<Values> poll(int64_t timeout_us) override {
    int64_t deadline = steady_us() + timeout_us;
    Result<std::string> reply = request(deadline);
    if (!reply.ok()) {
      fd_.reset();
      return reply.error();
    }
    return parse_memcached_stats(reply.value());
  }

 private:
  Result<std::string> request(int64_t deadline) {
    if (!fd_) {
      auto c = connect(deadline);
      if (!c.ok()) return Error{"cannot connect: " + c.error().message};
    }
    constexpr std::string_view kReq = "stats\r\n";
    auto w = wait_fd(fd_.get(), POLLOUT, deadline);
    if (!w.ok()) return w.error();
    // The request fits in any socket buffer: one send, or an error.
    if (::send(fd_.get(), kReq.data(), kReq.size(), MSG_NOSIGNAL) !=
        static_cast<ssize_t>(kReq.size()))
      return Error{std::string("send: ") + std::strerror(errno)};
    return receive(deadline);
  }

  Result<std::string> receive(int64_t deadline) {
    constexpr size_t kMaxReply = 4u << 20;
    std::string reply;
    char buf[16384];
    for (;;) {
      auto w = wait_fd(fd_.get(), POLLIN, deadline);
      if (!w.ok()) return w.error();
      ssize_t n = ::recv(fd_.get(), buf, sizeof buf, 0);
      if (n == 0) return Error{"connection closed by the server"};
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
        return Error{std::string("recv: ") + std::strerror(errno)};
      }
      reply.append(buf, static_cast<size_t>(n));
      if (reply == "END\r\n" || reply.ends_with("\r\nEND\r\n")) return reply;
      if (reply.ends_with("\r\n") &&
          (reply.starts_with("ERROR") || reply.starts_with("SERVER_ERROR") ||
           reply.starts_with("CLIENT_ERROR")))
        return Error{"server replied " + std::string(trim_blanks(reply.substr(0, 200)))};
      if (reply.size() > kMaxReply) return Error{"stats reply larger than 4 MiB"};
    }
  }

  Result<void> connect(int64_t deadline) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    addrinfo* res = nullptr;
    std::string port = std::to_string(server_.port);
    int rc = ::getaddrinfo(server_.host.c_str(), port.c_str(), &hints, &res);
    if (rc != 0) return Error{gai_strerror(rc)};
    std::unique_ptr<addrinfo, void (*)(addrinfo*)> guard(res, ::freeaddrinfo);
    std::string why = "no address";
    for (addrinfo* a = res; a; a = a->ai_next) {
      auto r = connect_one(a, deadline);
      if (r.ok()) return {};
      why = r.error().message;
    }
    return Error{why};
  }

  Result<void> connect_one(const addrinfo* a, int64_t deadline) {
    auto fd = tcp_connect_address(*a, deadline);
    if (!fd) return fd.error();
    fd_ = Fd(fd.value());
    return {};
  }

  const HostPort& server_;
  Fd fd_;
};

}  // namespace

std::unique_ptr<StatsSource> memcached_stats_source(const HostPort& server) {
  return std::make_unique<MemcachedSource>(server);
}

}  // namespace kv::drive
