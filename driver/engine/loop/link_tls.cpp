// A TLS link's socket steps (a TlsSession over the socket, store/tls_session.hpp): the write,
// read and handshake of event_link.cpp's plain-TCP paths, through the session. Apart from
// event_link.cpp as the TLS half of the transport seam.
#include <boost/asio/post.hpp>

#include "engine/loop/event_client.hpp"
#include "engine/loop/event_link.hpp"
#include "engine/loop/event_loop.hpp"
#include "kvbench/clock.hpp"

namespace kv::drive::loop {

// TLS writes go from sending_ (a retry offers the same bytes again); out_ gathers what is
// queued meanwhile, flushed once sending_ is out.
void Link::write_tls() {
  while (tls_sent_ < sending_.size()) {
    size_t n = 0;
    const int64_t at = steady_ns();
    auto io = tls_->write(sending_.data() + tls_sent_, sending_.size() - tls_sent_, &n);
    if (io != st::TlsSession::Io::done) {
      wait_tls(io, &Link::write_tls);
      return;
    }
    tls_sent_ += n;
    written_bytes_ += n;
    mark_sent(at);
  }
  writing_ = false;
  sending_.clear();
  tls_sent_ = 0;
  flush();
}

// Until OpenSSL has nothing decrypted left (want_read): it may hold whole replies the socket
// no longer signals.
void Link::read_tls() {
  for (;;) {
    size_t n = 0;
    auto io = tls_->read(w_.rbuf.data(), w_.rbuf.size(), &n);
    if (io == st::TlsSession::Io::want_read) break;
    if (io != st::TlsSession::Io::done) {
      wait_tls(io, &Link::read_tls);
      return;
    }
    // The TLS session read the socket itself: no receive stamp (the split is not available).
    if (!decode(std::string_view(w_.rbuf.data(), n), steady_ns(), 0)) return;
  }
  arm_read();
}

// Waits for what the session asked (then calls `then`); fails the link on closed / error.
void Link::wait_tls(st::TlsSession::Io io, void (Link::*then)()) {
  if (io != st::TlsSession::Io::want_read && io != st::TlsSession::Io::want_write) {
    if (state_ == State::connecting)
      connect_failed(steady_ns());
    else
      fail(OpStatus::error, steady_ns());
    return;
  }
  auto what =
      io == st::TlsSession::Io::want_read ? tcp::socket::wait_read : tcp::socket::wait_write;
  sock_.async_wait(what, [this, then, g = gen_](const error_code& e) {
    if (g != gen_) return;
    if (e) {
      wait_tls(st::TlsSession::Io::error, then);
      return;
    }
    (this->*then)();
  });
}

void Link::handshake_tls() {
  auto io = tls_->handshake();
  if (io == st::TlsSession::Io::done) {
    on_connected(error_code{});
    return;
  }
  wait_tls(io, &Link::handshake_tls);
}

}  // namespace kv::drive::loop
