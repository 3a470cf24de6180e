// kvmon's TCP server (docs/protocol.md): serves the samples of each tick, the history ring, the
// time (for clock sync) and the targets to read-only clients such as kvdrive's monitor link.
// Runs on the timer's io_context and thread: every socket operation is asynchronous and each
// client has a bounded send queue, so a slow or stuck client never delays a sample or another
// client; it is dropped and reported through the event callback. Not thread-safe: call from the
// io_context's thread only. Asio stays in server.cpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "history.hpp"
#include "records.hpp"

namespace boost::asio {
class io_context;
}

namespace kv::mon {

struct ServerConfig {
  std::string address;  // an IP address literal; empty: the server is off
  int port = 0;         // 0: any free port (see MonitorServer::port)
  std::string token;    // required in hello when non-empty
  int max_clients = 16;
  int64_t idle_timeout_us = 60'000'000;  // for clients that are not subscribed
  size_t client_queue_bytes = 4u << 20;  // unsent bytes before a client is dropped
  HistoryLimits history;
};

// What `hello` and `targets` tell a client about this kvmon.
struct ServerIdentity {
  std::string host;
  int64_t pid = 0;
  int64_t started_ts_us = 0;
  int64_t interval_us = 0;
  int64_t host_interval_us = 0;  // host lines come on ticks this far apart
  std::string command_line;
  std::vector<std::string> selectors;  // Selector::text() of each target
};

class MonitorServer {
 public:
  using EventSink = std::function<void(EventRecord)>;
  // Binds and listens; throws std::runtime_error naming the address on failure.
  MonitorServer(boost::asio::io_context& io, ServerConfig config, ServerIdentity identity,
                EventSink on_event);
  ~MonitorServer();
  MonitorServer(const MonitorServer&) = delete;
  MonitorServer& operator=(const MonitorServer&) = delete;

  // Keeps the tick in the history ring and sends it to subscribed clients.
  void publish(const Batch& batch);
  // Closes the listener and every client.
  void stop();
  int port() const;
  size_t clients() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace kv::mon
