#include "engine/loop/socket_transport.hpp"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <boost/asio/connect.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <cstring>

#include "engine/loop/event_client.hpp"
#include "engine/loop/tcp_transport.hpp"
#include "kvbench/clock.hpp"

namespace kv::drive::loop {
namespace {

// A socket's read buffer: small while replies are (an idle connection costs little), doubled up
// to the largest whenever a read fills it.
constexpr size_t kFirstReadBytes = 2048;
constexpr size_t kMaxReadBytes = 65536;

}  // namespace

ReadyList::ReadyList(asio::io_context& io) {
  const int fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (fd < 0) return;  // Asio's waits, as for one connection
  error_code ec;
  auto ep = std::make_unique<asio::posix::stream_descriptor>(io);
  ep->assign(fd, ec);
  if (ec) {
    ::close(fd);
    return;
  }
  ep_ = std::move(ep);
}

void ReadyList::watch(TcpTransport* t, int fd) {
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLET;
  ev.data.ptr = t;
  ::epoll_ctl(ep_->native_handle(), EPOLL_CTL_ADD, fd, &ev);
  arm();
}

void ReadyList::unwatch(int fd) {
  epoll_event ev{};
  ::epoll_ctl(ep_->native_handle(), EPOLL_CTL_DEL, fd, &ev);
}

void ReadyList::arm() {
  if (armed_) return;
  armed_ = true;
  ep_->async_wait(asio::posix::stream_descriptor::wait_read, [this](const error_code& ec) {
    armed_ = false;
    if (ec) return;
    on_ready();
  });
}

void ReadyList::on_ready() {
  std::array<epoll_event, 64> ev{};
  const int n = ::epoll_wait(ep_->native_handle(), ev.data(), static_cast<int>(ev.size()), 0);
  // An event gathered here for a socket that an earlier one closed or reopened finds it
  // unwatched, or reads nothing: transports live as long as the worker.
  for (int i = 0; i < n; ++i)
    static_cast<TcpTransport*>(ev[static_cast<size_t>(i)].data.ptr)->on_ready();
  arm();  // more than 64 ready: Asio's re-arm finds the descriptor readable again
}

// --- SocketTransport ---------------------------------------------------------------------------

SocketTransport::SocketTransport(SocketLoop loop, TransportEvents& events)
    : loop_(loop), ev_(events), sock_(loop.io) {
  sending_.reserve(4096);
}

bool SocketTransport::adopt(int fd, std::unique_ptr<store::TlsSession> tls) {
  sockaddr_storage a{};
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  error_code ec;
  sock_.assign(a.ss_family == AF_INET6 ? tcp::v6() : tcp::v4(), fd, ec);
  if (ec) {
    ::close(fd);
    return false;
  }
  sock_.non_blocking(true, ec);
  enable_rx_timestamps(fd);  // already on since the connect (EventClient): kept on here
  tls_ = std::move(tls);
  return true;
}

void SocketTransport::connect(const SocketAddress& to, bool nodelay) {
  tcp::endpoint ep;
  error_code ec;
  if (to.len == 0 || to.len > ep.capacity()) {
    ec = asio::error::host_not_found;
  } else {
    std::memcpy(ep.data(), &to.addr, to.len);
    ep.resize(to.len);
    sock_.open(ep.protocol(), ec);
  }
  if (!ec) sock_.set_option(tcp::no_delay(nodelay), ec);
  if (!ec) enable_rx_timestamps(sock_.native_handle());  // before the first segment arrives
  if (ec) {  // reported from the loop, not from inside the caller's refill
    asio::post(loop_.io, [this, g = gen_] {
      if (g == gen_) ev_.on_connect_failed(steady_ns());
    });
    return;
  }
  sock_.async_connect(ep, [this, g = gen_](const error_code& e) {
    if (g != gen_) return;
    if (e) {
      ev_.on_connect_failed(steady_ns());
      return;
    }
    error_code ig;
    sock_.non_blocking(true, ig);
    on_open();
  });
}

void SocketTransport::close() {
  unwatch();
  ++gen_;
  tls_.reset();
  error_code ec;
  sock_.close(ec);
  writing_ = false;
  sending_.clear();
}

Handoff SocketTransport::release(bool shutdown) {
  unwatch();  // before the socket is handed on: the worker's epoll must not keep it
  ++gen_;
  Handoff h;
  error_code ec;
  if (shutdown) sock_.shutdown(tcp::socket::shutdown_both, ec);
  const int fd = sock_.release(ec);
  if (!ec) {
    h.fd = fd;
    h.tls = std::move(tls_);
  }
  close();
  return h;
}

// --- TcpTransport ------------------------------------------------------------------------------

void TcpTransport::on_open() { ev_.on_connected(steady_ns()); }

void TcpTransport::close() {
  tx_on_ = false;
  SocketTransport::close();
}

ptrdiff_t TcpTransport::write(std::string_view bytes, bool now_only) {
  error_code ec;
  const int64_t at = steady_ns();  // the send call's start: its kernel path is the wire's
  const size_t n = sock_.write_some(asio::buffer(bytes.data(), bytes.size()), ec);
  if (ec && ec != asio::error::would_block && ec != asio::error::try_again) return -1;
  ev_.on_written(n, at);
  if (now_only) return static_cast<ptrdiff_t>(n);
  if (n == bytes.size()) return static_cast<ptrdiff_t>(n);
  // The socket's buffer is full: the rest goes out as it drains, in one piece.
  sending_.assign(bytes.substr(n));
  writing_ = true;
  asio::async_write(sock_, asio::buffer(sending_), [this, g = gen_](const error_code& e, size_t k) {
    if (g != gen_) return;
    ev_.on_written(k, steady_ns());
    writing_ = false;
    sending_.clear();
    if (e) {
      ev_.on_failed(steady_ns());
      return;
    }
    ev_.on_drained();
  });
  return static_cast<ptrdiff_t>(bytes.size());
}

// The socket goes on the worker's ready list once and on_ready() reads it whenever it becomes
// readable. Without a ready list (its epoll could not be made) the socket is waited on through
// Asio, then read the same way.
void TcpTransport::start_reading() { arm_read(); }

void TcpTransport::arm_read() {
  if (in_.empty()) in_.resize(kFirstReadBytes);
  if (loop_.ready.ok()) {  // registered once; on_ready reads
    if (!watched_) {
      watched_ = true;
      loop_.ready.watch(this, sock_.native_handle());
    }
    return;
  }
  sock_.async_wait(tcp::socket::wait_read, [this, g = gen_](const error_code& ec) {
    if (g != gen_) return;
    if (ec) {
      ev_.on_failed(steady_ns());
      return;
    }
    read_ready();
  });
}

void TcpTransport::unwatch() {
  if (!watched_) return;
  watched_ = false;
  loop_.ready.unwatch(sock_.native_handle());
}

void TcpTransport::on_ready() {
  if (!watched_) return;  // an event gathered before the link closed its socket
  read_ready();
}

void TcpTransport::read_ready() {
  if (tx_on_) ev_.on_tx_stamps();  // before the replies that need them (and on EPOLLERR alone)
  int64_t arrived = 0, read_at = 0;
  const ssize_t n = read_stamped(sock_.native_handle(), in_.data(), in_.size(), &arrived, &read_at);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
    if (!watched_) arm_read();
    return;
  }
  if (n <= 0) {  // an error, or the server closed the connection (eof)
    ev_.on_failed(steady_ns());
    return;
  }
  const auto got = static_cast<size_t>(n);
  // Replies are timed when the read returned; each also keeps its segment's arrival.
  if (!ev_.on_bytes(std::string_view(in_.data(), got), read_at, arrived)) return;
  if (got == in_.size()) {
    // A full buffer: more may be waiting. Read it now, and read more at once next time.
    if (in_.size() < kMaxReadBytes) in_.resize(in_.size() * 2);
    if (!drain()) return;
  }
  arm_read();  // a no-op while on the ready list (what arrives later is a new edge)
}

bool TcpTransport::drain() {
  for (;;) {
    if (tx_on_) ev_.on_tx_stamps();
    int64_t arrived = 0, read_at = 0;
    const ssize_t n = read_stamped(sock_.native_handle(), loop_.scratch.data(),
                                   loop_.scratch.size(), &arrived, &read_at);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return true;
    if (n <= 0) {
      ev_.on_failed(steady_ns());
      return false;
    }
    const auto got = static_cast<size_t>(n);
    if (!ev_.on_bytes(std::string_view(loop_.scratch.data(), got), read_at, arrived)) return false;
    // A short read emptied the socket (a later arrival is a new readiness edge).
    if (got < loop_.scratch.size()) return true;
  }
}

bool TcpTransport::enable_tx_stamps() {
  tx_on_ = enable_tx_timestamps(sock_.native_handle());
  return tx_on_;
}

TxRead TcpTransport::read_tx_stamp(uint32_t* key, int64_t* sent_ns) {
  return loop::read_tx_stamp(sock_.native_handle(), key, sent_ns);
}

// --- TlsTransport ------------------------------------------------------------------------------

TlsTransport::TlsTransport(SocketLoop loop, TransportEvents& events, const store::TlsContext& ctx,
                           std::string host)
    : SocketTransport(loop, events), ctx_(ctx), host_(std::move(host)) {}

void TlsTransport::on_open() {
  tls_ = std::make_unique<store::TlsSession>(ctx_, sock_.native_handle(), host_);
  connecting_ = true;
  handshake_step();
}

void TlsTransport::close() {
  connecting_ = false;
  in_write_ = false;
  sent_ = 0;
  SocketTransport::close();
}

void TlsTransport::handshake_step() {
  auto io = tls_->handshake();
  if (io == store::TlsSession::Io::done) {
    connecting_ = false;
    ev_.on_connected(steady_ns());
    return;
  }
  wait(io, &TlsTransport::handshake_step);
}

// TLS writes go from sending_ (a retry offers the same bytes again); the link gathers what is
// queued meanwhile and writes it once this is out (on_drained). Nothing is sent "at once" in
// pieces: a TLS target never splits its writes.
ptrdiff_t TlsTransport::write(std::string_view bytes, bool now_only) {
  if (now_only) return 0;
  sending_.assign(bytes);
  sent_ = 0;
  writing_ = true;
  in_write_ = true;
  write_step();
  in_write_ = false;
  return static_cast<ptrdiff_t>(bytes.size());
}

void TlsTransport::write_step() {
  while (sent_ < sending_.size()) {
    size_t n = 0;
    const int64_t at = steady_ns();
    auto io = tls_->write(sending_.data() + sent_, sending_.size() - sent_, &n);
    if (io != store::TlsSession::Io::done) {
      wait(io, &TlsTransport::write_step);
      return;
    }
    sent_ += n;
    ev_.on_written(n, at);
  }
  writing_ = false;
  sending_.clear();
  sent_ = 0;
  if (!in_write_) ev_.on_drained();  // finished after a wait: the link may write what waits
}

void TlsTransport::start_reading() {
  sock_.async_wait(tcp::socket::wait_read, [this, g = gen_](const error_code& ec) {
    if (g != gen_) return;
    if (ec) {
      ev_.on_failed(steady_ns());
      return;
    }
    read_step();
  });
}

// Until OpenSSL has nothing decrypted left (want_read): it may hold whole replies the socket
// no longer signals.
void TlsTransport::read_step() {
  for (;;) {
    size_t n = 0;
    auto io = tls_->read(loop_.scratch.data(), loop_.scratch.size(), &n);
    if (io == store::TlsSession::Io::want_read) break;
    if (io != store::TlsSession::Io::done) {
      wait(io, &TlsTransport::read_step);
      return;
    }
    // The session read the socket itself: no receive stamp (the split is not available).
    if (!ev_.on_bytes(std::string_view(loop_.scratch.data(), n), steady_ns(), 0)) return;
  }
  start_reading();
}

// Waits for what the session asked (then calls `then`); fails the connection on closed / error.
void TlsTransport::wait(store::TlsSession::Io io, void (TlsTransport::*then)()) {
  if (io != store::TlsSession::Io::want_read && io != store::TlsSession::Io::want_write) {
    if (connecting_)
      ev_.on_connect_failed(steady_ns());
    else
      ev_.on_failed(steady_ns());
    return;
  }
  auto what =
      io == store::TlsSession::Io::want_read ? tcp::socket::wait_read : tcp::socket::wait_write;
  sock_.async_wait(what, [this, then, g = gen_](const error_code& e) {
    if (g != gen_) return;
    if (e) {
      wait(store::TlsSession::Io::error, then);
      return;
    }
    (this->*then)();
  });
}

}  // namespace kv::drive::loop
