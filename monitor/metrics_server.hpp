// kvmon's /metrics endpoint (--metrics ADDR:PORT): a minimal HTTP/1.1 server for Prometheus
// scrapers on the timer's io_context and thread. GET /metrics answers with the page `render`
// makes at that moment (Prometheus text 0.0.4, or OpenMetrics when the Accept header asks for
// application/openmetrics-text), one request per connection (Connection: close). Requests are
// bounded (8 KiB of head, no body), each connection has one deadline for reading the request and
// writing the answer (10 s), and at most 16 connections are open at once: a slow or stuck
// scraper costs a socket, never a sample. With a token, a request must carry
// `Authorization: Bearer TOKEN`; failures are rate-limited per address as on the kvmon link.
// Not thread-safe: call from the io_context's thread only. Asio stays in metrics_server.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace boost::asio {
class io_context;
}

namespace kv::mon {

struct MetricsConfig {
  std::string address;  // an IP address literal; empty: the endpoint is off
  int port = 0;         // 0: any free port (see MetricsServer::port)
  std::string token;    // required as a Bearer token when non-empty
};

class MetricsServer {
 public:
  // The page in the format asked for (true: OpenMetrics).
  using Render = std::function<std::string(bool openmetrics)>;
  // Binds and listens; throws std::runtime_error naming the address on failure.
  MetricsServer(boost::asio::io_context& io, MetricsConfig config, Render render);
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // Closes the listener and every connection.
  void stop();
  int port() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace kv::mon
