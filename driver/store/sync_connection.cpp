#include "store/sync_connection.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <optional>
#include <stdexcept>

#include "store/resp_codec.hpp"
#include "store/tls_context.hpp"

namespace kv::drive::store {
namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using boost::system::error_code;

struct SyncConnection::Impl {
  asio::io_context io;
  tcp::socket plain{io};
  std::optional<asio::ssl::stream<tcp::socket&>> tls;

  // Runs the operations started on io for at most timeout_us; on a timeout closes the socket
  // (which ends them with operation_aborted) and returns false.
  bool run_for(int64_t timeout_us) {
    io.restart();
    io.run_for(std::chrono::microseconds(timeout_us));
    if (io.stopped()) return true;
    error_code ignored;
    plain.close(ignored);
    io.restart();
    io.run();
    return false;
  }
};

namespace {
std::string name_of(const HostPort& s) { return s.host + ":" + std::to_string(s.port); }
std::string ms(int64_t us) { return std::to_string(us / 1000) + " ms"; }
}  // namespace

SyncConnection::SyncConnection(const HostPort& server, const TlsContext* tls, int64_t timeout_us)
    : server_(server), impl_(std::make_unique<Impl>()) {
  const std::string who = name_of(server);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(timeout_us);
  auto left_us = [&] {
    return std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::microseconds>(
                                    deadline - std::chrono::steady_clock::now())
                                    .count());
  };
  error_code ec;
  tcp::resolver resolver(impl_->io);
  auto endpoints = resolver.resolve(server.host, std::to_string(server.port), ec);
  if (ec) throw std::runtime_error("cannot resolve " + who + ": " + ec.message());
  error_code cec = asio::error::would_block;
  asio::async_connect(impl_->plain, endpoints,
                      [&](error_code e, const tcp::endpoint&) { cec = e; });
  if (!impl_->run_for(left_us()))
    throw std::runtime_error("cannot connect to " + who + ": timed out after " + ms(timeout_us));
  if (cec) throw std::runtime_error("cannot connect to " + who + ": " + cec.message());
  impl_->plain.set_option(tcp::no_delay(true), ec);
  if (!tls) return;

  impl_->tls.emplace(impl_->plain, tls->asio_context());
  tls->prepare(impl_->tls->native_handle(), server.host);
  error_code hec = asio::error::would_block;
  impl_->tls->async_handshake(asio::ssl::stream_base::client, [&](error_code e) { hec = e; });
  if (!impl_->run_for(left_us()))
    throw std::runtime_error("TLS handshake with " + who + " timed out after " + ms(timeout_us));
  if (hec)
    throw std::runtime_error("TLS handshake with " + who + " failed: " +
                             tls_handshake_error(impl_->tls->native_handle(), hec.message()));
}

SyncConnection::~SyncConnection() = default;

bool SyncConnection::tls() const { return impl_->tls.has_value(); }

std::string SyncConnection::request(std::string_view bytes,
                                    const std::function<bool(std::string_view)>& complete,
                                    int64_t timeout_us) {
  const std::string who = name_of(server_);
  std::string got;
  char buf[16384];
  error_code failure;
  bool done = false;
  std::function<void()> read_more;
  auto on_read = [&](error_code e, size_t n) {
    got.append(buf, n);
    if (e) {
      failure = e;
    } else if (complete(got)) {
      done = true;
    } else {
      read_more();
    }
  };
  read_more = [&] {
    if (impl_->tls)
      impl_->tls->async_read_some(asio::buffer(buf), on_read);
    else
      impl_->plain.async_read_some(asio::buffer(buf), on_read);
  };
  auto on_write = [&](error_code e, size_t) {
    if (e)
      failure = e;
    else
      read_more();
  };
  if (impl_->tls)
    asio::async_write(*impl_->tls, asio::buffer(bytes.data(), bytes.size()), on_write);
  else
    asio::async_write(impl_->plain, asio::buffer(bytes.data(), bytes.size()), on_write);
  if (!impl_->run_for(timeout_us))
    throw std::runtime_error("no reply from " + who + " within " + ms(timeout_us));
  if (!done) {
    bool closed = failure == asio::error::eof || failure == asio::ssl::error::stream_truncated;
    throw std::runtime_error("connection to " + who + " lost: " +
                             (closed ? std::string("closed by the server") : failure.message()));
  }
  return got;
}

std::string SyncConnection::request_resp(std::string_view command, int64_t timeout_us) {
  return request(
      command,
      [](std::string_view got) {
        RespDecoder d;  // few, small replies: parsing from the start each time is fine
        RespReply r;
        return d.feed(got) && d.next(&r) != ReadStatus::need_more;
      },
      timeout_us);
}

}  // namespace kv::drive::store
