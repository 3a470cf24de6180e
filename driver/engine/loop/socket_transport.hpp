// The event engine's socket transports (loop/transport.hpp): TcpTransport reads plain TCP with
// the kernel's receive stamp of each read (loop/tcp_transport.hpp) through the worker's ready
// list; TlsTransport runs a TlsSession over the socket. Both share SocketTransport's connect,
// close and hand-back. Internal to engine/loop/.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/loop/transport.hpp"
#include "store/tls_session.hpp"

namespace kv::drive::loop {

namespace asio = boost::asio;
using tcp = boost::asio::ip::tcp;
using boost::system::error_code;

class TcpTransport;

// The worker's ready list: plain-TCP sockets are read through an epoll of the worker's own
// (edge-triggered, each registered once), and Asio waits on that one descriptor. A wake-up of
// the thread costs one epoll_wait and one re-arm, however many sockets it finds ready; each
// transport then reads with recvmsg, for the kernel's receive stamp (Asio's own reads cannot
// return it). (With 25 connections per thread the ready list cost 0.85-0.98x Asio's reads'
// client CPU per op at pipeline 1; with 2 per thread, 1.06-1.26x:
// bench/results/driver_vs_peers-2026-12-03-readylist-*.)
class ReadyList {
 public:
  explicit ReadyList(asio::io_context& io);
  ReadyList(const ReadyList&) = delete;
  ReadyList& operator=(const ReadyList&) = delete;
  bool ok() const noexcept { return ep_ != nullptr; }  // false: no epoll (Asio waits instead)
  // Registers / unregisters a socket; t->on_ready() runs whenever it is readable (the transport
  // reads until a short read or EAGAIN).
  void watch(TcpTransport* t, int fd);
  void unwatch(int fd);

 private:
  void arm();
  void on_ready();
  std::unique_ptr<asio::posix::stream_descriptor> ep_;  // null: none
  bool armed_ = false;
};

// What a worker lends its socket transports.
struct SocketLoop {
  asio::io_context& io;
  ReadyList& ready;
  std::span<char> scratch;  // every socket's further reads land here (TcpTransport::drain)
};

// The socket and its life, shared by TCP and TLS: adopt, connect, close, hand-back. The
// handlers of a closed socket's operations find gen_ changed and do nothing.
class SocketTransport : public Transport {
 public:
  SocketTransport(SocketLoop loop, TransportEvents& events);
  bool adopt(int fd, std::unique_ptr<store::TlsSession> tls) override;
  void connect(const SocketAddress& to, bool nodelay) override;
  bool writing() const override { return writing_; }
  void close() override;
  Handoff release(bool shutdown) override;

 protected:
  // The TCP connect is done (non-blocking already): TLS handshakes, TCP is connected.
  virtual void on_open() = 0;
  virtual void unwatch() {}
  void fail_connect();

  SocketLoop loop_;
  TransportEvents& ev_;
  tcp::socket sock_;
  std::unique_ptr<store::TlsSession> tls_;  // null: plain TCP
  uint64_t gen_ = 0;                        // bumped whenever the socket is closed
  bool writing_ = false;
  std::string sending_;  // what a write could not send at once
};

class TcpTransport final : public SocketTransport {
 public:
  using SocketTransport::SocketTransport;
  void start_reading() override;
  ptrdiff_t write(std::string_view bytes, bool now_only) override;
  void close() override;
  bool enable_tx_stamps() override;
  TxRead read_tx_stamp(uint32_t* key, int64_t* sent_ns) override;
  // The ready list found the socket readable.
  void on_ready();

 private:
  void on_open() override;
  void unwatch() override;
  void arm_read();
  // One stamped read (loop/tcp_transport.hpp), handed on; drains a full buffer.
  void read_ready();
  // Reads what the socket holds into the scratch buffer; false: the link closed it.
  bool drain();
  std::vector<char> in_;  // the first read of each readiness lands here (see read_ready)
  bool watched_ = false;  // on the ready list
  bool tx_on_ = false;    // transmit stamps asked for
};

class TlsTransport final : public SocketTransport {
 public:
  // `ctx` outlives the transport; `host` is the name the server's certificate must carry.
  TlsTransport(SocketLoop loop, TransportEvents& events, const store::TlsContext& ctx,
               std::string host);
  void start_reading() override;
  ptrdiff_t write(std::string_view bytes, bool now_only) override;
  void close() override;

 private:
  void on_open() override;
  // The session's steps: each waits for what it asked (wait) and goes on from there.
  void write_step();
  void read_step();
  void handshake_step();
  void wait(store::TlsSession::Io io, void (TlsTransport::*then)());
  const store::TlsContext& ctx_;
  std::string host_;
  bool connecting_ = false;
  bool in_write_ = false;  // inside write(): a write done at once is no on_drained
  size_t sent_ = 0;        // of sending_, taken by the session
};

}  // namespace kv::drive::loop
