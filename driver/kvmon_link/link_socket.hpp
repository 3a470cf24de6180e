// A blocking TCP connection that speaks the kvmon protocol line by line, with timeouts on every
// operation (poll), for MonitorLink's network thread. Move-only; one thread uses it. After any
// error it is dropped and a new one is connected, never reused.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "kvbench/protocol.hpp"
#include "kvbench/result.hpp"

namespace kv::drive {

class LinkSocket {
 public:
  // Resolves and connects within timeout_ms. Error says what failed, naming host:port.
  static Result<LinkSocket> connect(const std::string& host, int port, int timeout_ms);

  LinkSocket(LinkSocket&& other) noexcept;
  LinkSocket& operator=(LinkSocket&& other) noexcept;
  LinkSocket(const LinkSocket&) = delete;
  LinkSocket& operator=(const LinkSocket&) = delete;
  ~LinkSocket();

  Result<void> send(const proto::Message& m, int timeout_ms = 5000);
  // The next message, nullopt if none arrived within timeout_ms. Error on EOF, a socket error,
  // an oversized line or a malformed message.
  Result<std::optional<proto::Message>> next(int timeout_ms);
  // Every byte received on this socket so far.
  uint64_t bytes_received() const noexcept { return received_; }

 private:
  explicit LinkSocket(int fd) : fd_(fd) {}
  int fd_ = -1;
  uint64_t received_ = 0;
  proto::LineFramer framer_{proto::kMaxReplyBytes};
};

}  // namespace kv::drive
