#include "store/tls_session.hpp"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>

#include <boost/asio/ssl/context.hpp>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "kvbench/clock.hpp"
#include "store/tls_context.hpp"

namespace kv::drive::store {

void TlsSession::Free::operator()(ssl_st* s) const noexcept { SSL_free(s); }

TlsSession::TlsSession(const TlsContext& ctx, int fd, const std::string& host)
    : ssl_(SSL_new(ctx.asio_context().native_handle())), fd_(fd) {
  if (!ssl_) throw std::runtime_error("TLS: cannot create a session (out of memory)");
  ctx.prepare(ssl_.get(), host);
  // Partial writes, and a retry may pass a buffer that moved (the caller's grows).
  SSL_set_mode(ssl_.get(), SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  if (SSL_set_fd(ssl_.get(), fd) != 1) throw std::runtime_error("TLS: cannot attach the socket");
  SSL_set_connect_state(ssl_.get());
}

TlsSession::~TlsSession() = default;
TlsSession::TlsSession(TlsSession&&) noexcept = default;
TlsSession& TlsSession::operator=(TlsSession&&) noexcept = default;

TlsSession::Io TlsSession::result(int ret, const char* what) {
  int e = SSL_get_error(ssl_.get(), ret);
  switch (e) {
    case SSL_ERROR_WANT_READ:
      return Io::want_read;
    case SSL_ERROR_WANT_WRITE:
      return Io::want_write;
    case SSL_ERROR_ZERO_RETURN:
      return Io::closed;
    case SSL_ERROR_SYSCALL: {
      int err = errno;
      ERR_clear_error();
      if (err == 0 || err == ECONNRESET || err == EPIPE) return Io::closed;
      error_ = std::string(what) + ": " + std::strerror(err);
      return Io::error;
    }
    default: {
      unsigned long code = ERR_peek_last_error();
      const char* reason = code ? ERR_reason_error_string(code) : nullptr;
      ERR_clear_error();
      error_ = std::string(what) + ": " + (reason ? reason : "error " + std::to_string(e));
      long v = SSL_get_verify_result(ssl_.get());
      if (v != X509_V_OK) error_ += std::string(": ") + X509_verify_cert_error_string(v);
      return Io::error;
    }
  }
}

TlsSession::Io TlsSession::handshake() {
  int r = SSL_do_handshake(ssl_.get());
  return r == 1 ? Io::done : result(r, "TLS handshake");
}

TlsSession::Io TlsSession::read(char* buf, size_t cap, size_t* n) {
  *n = 0;
  int r = SSL_read_ex(ssl_.get(), buf, cap, n);
  return r == 1 ? Io::done : result(r, "TLS read");
}

TlsSession::Io TlsSession::write(const char* buf, size_t len, size_t* n) {
  *n = 0;
  int r = SSL_write_ex(ssl_.get(), buf, len, n);
  return r == 1 ? Io::done : result(r, "TLS write");
}

size_t TlsSession::pending() const { return static_cast<size_t>(SSL_pending(ssl_.get())); }

bool TlsSession::handshake_until(int64_t deadline_us) {
  for (;;) {
    Io io = handshake();
    if (io == Io::done) return true;
    if (io == Io::closed) {
      error_ = "TLS handshake: the server closed the connection";
      return false;
    }
    if (io == Io::error) return false;
    int64_t left = deadline_us - steady_us();
    if (left <= 0) {
      error_ = "TLS handshake: timed out";
      return false;
    }
    pollfd p{fd_, static_cast<short>(io == Io::want_read ? POLLIN : POLLOUT), 0};
    if (::poll(&p, 1, static_cast<int>((left + 999) / 1000)) < 0 && errno != EINTR) {
      error_ = std::string("TLS handshake: poll: ") + std::strerror(errno);
      return false;
    }
  }
}

}  // namespace kv::drive::store
