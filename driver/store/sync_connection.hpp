// A blocking request/reply connection to one store server, plain TCP or TLS, every call bounded
// by a timeout. For the few requests outside the request path: CLUSTER SLOTS for the slot map,
// store counters over TLS, the TLS tests. Not for the hot path (one io_context per connection,
// a copy of each reply). Asio is included only by sync_connection.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "store/target_uri.hpp"

namespace kv::drive::store {

class TlsContext;

class SyncConnection {
 public:
  // Connects to `server` and, when `tls` is set, completes the TLS handshake (prepared by
  // tls->prepare with the server's host), all within timeout_us. Throws std::runtime_error
  // with one line: "cannot connect to 127.0.0.1:6379: Connection refused", "TLS handshake with
  // 127.0.0.1:6379 failed: certificate verify failed (SSL routines): unable to get local issuer
  // certificate", "... timed out after 1000 ms". `tls` must outlive the connection.
  SyncConnection(const HostPort& server, const TlsContext* tls, int64_t timeout_us);
  ~SyncConnection();
  SyncConnection(const SyncConnection&) = delete;
  SyncConnection& operator=(const SyncConnection&) = delete;

  // Writes `bytes`, then reads until complete(received) is true, within timeout_us; returns
  // what was received. Throws std::runtime_error (one line) on a timeout, an error or the
  // server closing; the connection is not usable after that.
  std::string request(std::string_view bytes, const std::function<bool(std::string_view)>& complete,
                      int64_t timeout_us);
  // request() for one RESP command: complete when one whole reply has arrived.
  std::string request_resp(std::string_view command, int64_t timeout_us);

  const HostPort& server() const { return server_; }
  bool tls() const;

 private:
  struct Impl;
  HostPort server_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kv::drive::store
