#include "metrics_server.hpp"

#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <map>
#include <stdexcept>
#include <string_view>

#include "auth_throttle.hpp"
#include "kvbench/log.hpp"
#include "kvbench/protocol.hpp"
#include "listener.hpp"

namespace kv::mon {
namespace {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

constexpr size_t kMaxHeadBytes = size_t{8} * 1024;
constexpr auto kDeadline = std::chrono::seconds(10);
constexpr size_t kMaxConnections = 16;

class Connection;

const char* content_type(bool openmetrics) {
  return openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8"
                     : "text/plain; version=0.0.4; charset=utf-8";
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The parts of a request head the endpoint looks at.
struct Request {
  std::string_view method, path, authorization, accept;
};

// Parses "METHOD SP TARGET SP HTTP/1.x CRLF (NAME: VALUE CRLF)*"; false if it is not that.
bool parse_head(std::string_view head, Request* r) {
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  size_t sp1 = line.find(' ');
  size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos) return false;
  r->method = line.substr(0, sp1);
  r->path = line.substr(sp1 + 1, sp2 - sp1 - 1);
  if (line.substr(sp2 + 1).substr(0, 7) != "HTTP/1.") return false;
  if (size_t q = r->path.find('?'); q != std::string_view::npos) r->path = r->path.substr(0, q);
  std::string_view rest = eol == std::string_view::npos ? "" : head.substr(eol + 2);
  while (!rest.empty()) {
    size_t e = rest.find("\r\n");
    std::string_view h = rest.substr(0, e);
    rest = e == std::string_view::npos ? "" : rest.substr(e + 2);
    if (h.empty()) break;
    size_t colon = h.find(':');
    if (colon == std::string_view::npos) return false;
    std::string_view name = h.substr(0, colon), value = trim(h.substr(colon + 1));
    if (iequals(name, "authorization")) r->authorization = value;
    if (iequals(name, "accept")) r->accept = value;
  }
  return true;
}

}  // namespace

struct MetricsServer::Impl : std::enable_shared_from_this<MetricsServer::Impl> {
  Impl(asio::io_context& io_, MetricsConfig c, Render r)
      : io(io_), config(std::move(c)), render(std::move(r)), acceptor(io_), retry(io_) {}
  void listen();
  void accept();

  asio::io_context& io;
  MetricsConfig config;
  Render render;
  tcp::acceptor acceptor;
  asio::steady_timer retry;
  AuthThrottle auth{"metrics client"};
  std::map<Connection*, std::shared_ptr<Connection>> connections;
  bool stopped = false;
};

namespace {

// One request and its answer; self-owning through the handlers' shared_ptrs.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(tcp::socket socket, std::shared_ptr<MetricsServer::Impl> server)
      : socket_(std::move(socket)), deadline_(server->io), server_(std::move(server)) {
    boost::system::error_code ec;
    auto ep = socket_.remote_endpoint(ec);
    address_ = ec ? "?" : ep.address().to_string();
    peer_ = ec ? "?" : address_ + ":" + std::to_string(ep.port());
  }
  void start() {
    deadline_.expires_after(kDeadline);
    deadline_.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
      if (ec || self->closed_) return;
      log_debug() << "metrics client " << self->peer_ << ": no request or answer within "
                  << kDeadline.count() << " s (closing)";
      self->close();
    });
    do_read();
  }
  void close() {
    if (closed_) return;
    closed_ = true;
    boost::system::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    deadline_.cancel();
    server_->connections.erase(this);
  }

 private:
  void do_read() {
    socket_.async_read_some(asio::buffer(rbuf_),
                            [self = shared_from_this()](const boost::system::error_code& ec,
                                                        size_t n) { self->on_read(ec, n); });
  }
  void on_read(const boost::system::error_code& ec, size_t n) {
    if (closed_) return;
    if (ec) return close();
    head_.append(rbuf_.data(), n);
    size_t end = head_.find("\r\n\r\n");
    if (end == std::string::npos) {
      if (head_.size() > kMaxHeadBytes) {
        return answer("431 Request Header Fields Too Large", "text/plain",
                      "request head longer than " + std::to_string(kMaxHeadBytes) + " bytes\n");
      }
      return do_read();
    }
    if (end + 4 > kMaxHeadBytes) {
      return answer("431 Request Header Fields Too Large", "text/plain",
                    "request head longer than " + std::to_string(kMaxHeadBytes) + " bytes\n");
    }
    handle(std::string_view(head_).substr(0, end + 2));
  }

  void handle(std::string_view head) {
    Request r;
    if (!parse_head(head, &r)) return answer("400 Bad Request", "text/plain", "bad request\n");
    const std::string& token = server_->config.token;
    if (!token.empty()) {
      if (server_->auth.addresses() > 0) server_->auth.log_summaries(false);
      int64_t wait_us = 0;
      if (server_->auth.blocked(address_, &wait_us)) {
        std::string after = std::to_string((wait_us + 999'999) / 1'000'000);
        return answer("429 Too Many Requests", "text/plain",
                      "too many failed attempts; retry in " + after + " s\n",
                      "Retry-After: " + after + "\r\n");
      }
      constexpr std::string_view kBearer = "Bearer ";
      std::string_view given = r.authorization;
      bool ok = given.size() > kBearer.size() && iequals(given.substr(0, 7), kBearer) &&
                proto::constant_time_equal(trim(given.substr(7)), token);
      if (!ok) {
        server_->auth.failed(address_, peer_);
        return answer("401 Unauthorized", "text/plain", "wrong or missing token\n",
                      "WWW-Authenticate: Bearer realm=\"kvmon\"\r\n");
      }
      server_->auth.succeeded(address_);
    }
    const bool head_only = r.method == "HEAD";
    if (r.method != "GET" && !head_only) {
      return answer("405 Method Not Allowed", "text/plain", "only GET\n", "Allow: GET, HEAD\r\n");
    }
    if (r.path == "/metrics") {
      const bool om = r.accept.find("application/openmetrics-text") != std::string_view::npos;
      return answer("200 OK", content_type(om), server_->render(om), {}, head_only);
    }
    if (r.path == "/") {
      return answer("200 OK", "text/plain", "kvmon: metrics at /metrics\n", {}, head_only);
    }
    answer("404 Not Found", "text/plain", "not found: try /metrics\n");
  }

  void answer(std::string_view status, std::string_view type, const std::string& body,
              const std::string& extra = {}, bool head_only = false) {
    out_.clear();
    out_.append("HTTP/1.1 ").append(status).append("\r\nContent-Type: ").append(type);
    out_.append("\r\nContent-Length: ").append(std::to_string(body.size()));
    out_.append("\r\nConnection: close\r\n").append(extra).append("\r\n");
    if (!head_only) out_ += body;
    asio::async_write(
        socket_, asio::buffer(out_),
        [self = shared_from_this()](const boost::system::error_code&, size_t) { self->close(); });
  }

  tcp::socket socket_;
  asio::steady_timer deadline_;
  std::shared_ptr<MetricsServer::Impl> server_;
  std::string address_, peer_;
  std::array<char, 2048> rbuf_{};
  std::string head_;
  std::string out_;
  bool closed_ = false;
};

}  // namespace

void MetricsServer::Impl::listen() {
  open_listener(acceptor, config.address, config.port, "--metrics");
}

void MetricsServer::Impl::accept() {
  acceptor.async_accept(
      [this, self = shared_from_this()](const boost::system::error_code& ec, tcp::socket socket) {
        if (stopped || ec == asio::error::operation_aborted) return;
        if (ec) {  // e.g. out of file descriptors: try again a little later, do not spin
          log_warn() << "metrics: accept failed: " << ec.message();
          retry.expires_after(std::chrono::milliseconds(100));
          retry.async_wait([this, self](const boost::system::error_code& e) {
            if (!e && !stopped) accept();
          });
          return;
        }
        if (connections.size() >= kMaxConnections) {
          log_debug() << "metrics: refused a connection: " << kMaxConnections << " open";
          boost::system::error_code ignored;
          socket.close(ignored);
        } else {
          auto c = std::make_shared<Connection>(std::move(socket), self);
          connections.emplace(c.get(), c);
          c->start();
        }
        accept();
      });
}

MetricsServer::MetricsServer(asio::io_context& io, MetricsConfig config, Render render)
    : impl_(std::make_shared<Impl>(io, std::move(config), std::move(render))) {
  impl_->listen();
  log_info() << "serving metrics on http://" << impl_->config.address << ":" << port() << "/metrics"
             << (impl_->config.token.empty() ? " (no token)" : " (token required)");
  impl_->accept();
}

MetricsServer::~MetricsServer() {
  try {
    stop();
  } catch (...) {
    // Closing sockets: nothing is left to report a failure to.
  }
}

void MetricsServer::stop() {
  if (impl_->stopped) return;
  impl_->stopped = true;
  impl_->auth.log_summaries(true);
  boost::system::error_code ignored;
  impl_->acceptor.close(ignored);
  impl_->retry.cancel();
  std::vector<std::shared_ptr<Connection>> open;
  for (const auto& [p, c] : impl_->connections) open.push_back(c);
  for (const auto& c : open) c->close();
}

int MetricsServer::port() const {
  boost::system::error_code ec;
  auto ep = impl_->acceptor.local_endpoint(ec);
  return ec ? 0 : ep.port();
}

}  // namespace kv::mon
