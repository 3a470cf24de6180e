#include "kvmon_link/link_socket.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <utility>

#include "kvbench/clock.hpp"
#include "kvbench/tcp_connect.hpp"

namespace kv::drive {
namespace {

std::string errno_text(int err) { return std::strerror(err); }

// Waits for `events` on fd; 1 ready, 0 timeout, -1 error (errno set).
int wait_fd(int fd, short events, int timeout_ms) {
  pollfd p{fd, events, 0};
  int rc;
  do {
    rc = poll(&p, 1, timeout_ms);
  } while (rc < 0 && errno == EINTR);
  return rc;
}

Result<int> connect_one(const addrinfo* ai, int timeout_ms) {
  auto fd = tcp_connect_address(*ai, steady_us() + int64_t{timeout_ms} * 1000);
  if (!fd) return fd;
  int one = 1;
  setsockopt(fd.value(), IPPROTO_TCP, TCP_NODELAY, &one,
             sizeof one);  // time requests go out at once
  return fd;
}

}  // namespace

Result<LinkSocket> LinkSocket::connect(const std::string& host, int port, int timeout_ms) {
  std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* list = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &list);
  if (rc != 0) return Error{"cannot resolve " + where + ": " + gai_strerror(rc)};
  std::string last = "no address";
  for (const addrinfo* ai = list; ai; ai = ai->ai_next) {
    auto fd = connect_one(ai, timeout_ms);
    if (fd) {
      freeaddrinfo(list);
      return LinkSocket(fd.value());
    }
    last = fd.error().message;
  }
  freeaddrinfo(list);
  return Error{"cannot connect to kvmon at " + where + ": " + last};
}

LinkSocket::LinkSocket(LinkSocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      received_(std::exchange(other.received_, 0)),
      framer_(std::move(other.framer_)) {}

LinkSocket& LinkSocket::operator=(LinkSocket&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    received_ = std::exchange(other.received_, 0);
    framer_ = std::move(other.framer_);
  }
  return *this;
}

LinkSocket::~LinkSocket() {
  if (fd_ >= 0) close(fd_);
}

Result<void> LinkSocket::send(const proto::Message& m, int timeout_ms) {
  std::string bytes = proto::encode(m);
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd_, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n > 0) {
      off += static_cast<size_t>(n);
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      if (wait_fd(fd_, POLLOUT, timeout_ms) <= 0) return Error{"send timed out"};
    } else {
      return Error{"send failed: " + errno_text(errno)};
    }
  }
  return {};
}

Result<std::optional<proto::Message>> LinkSocket::next(int timeout_ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  std::string line;
  for (;;) {
    auto st = framer_.next(&line);
    if (st == proto::LineFramer::Status::too_long) return Error{"reply line over the limit"};
    if (st == proto::LineFramer::Status::line) {
      auto m = proto::parse_message(line);
      if (!m) return Error{"malformed reply: " + m.error().message};
      return std::optional<proto::Message>(std::move(m).value());
    }
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    end - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) return std::optional<proto::Message>();
    int rc = wait_fd(fd_, POLLIN, static_cast<int>(left));
    if (rc < 0) return Error{"poll failed: " + errno_text(errno)};
    if (rc == 0) return std::optional<proto::Message>();
    char buf[65536];
    ssize_t n = recv(fd_, buf, sizeof buf, 0);
    if (n == 0) return Error{"kvmon closed the connection"};
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return Error{"receive failed: " + errno_text(errno)};
    }
    received_ += static_cast<uint64_t>(n);
    framer_.feed(std::string_view(buf, static_cast<size_t>(n)));
  }
}

}  // namespace kv::drive
