// One TLS connection over a connected, non-blocking socket that the caller owns and polls: the
// shape of a transport for an event loop that waits for socket readiness itself (reactive: wait
// readable / writable, then read_some / write_some). Each call does what it can without
// blocking and says what it waits for. OpenSSL is included only by tls_session.cpp.
//
// Unlike a plain socket, a TLS read may need the socket writable (renegotiation, key update)
// and decrypted bytes may wait inside OpenSSL while the socket is not readable: after a read
// that filled the buffer, call read() again before waiting (or check pending()).
//
// Not thread-safe: one connection, one thread. Moving the session moves the connection.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

struct ssl_st;

namespace kv::drive::store {

class TlsContext;

class TlsSession {
 public:
  enum class Io {
    done,        // the call completed (n bytes read or written)
    want_read,   // call again once the socket is readable
    want_write,  // call again once the socket is writable
    closed,      // the server closed the connection (with or without close_notify)
    error        // a TLS or socket error: error() says which; the session is finished
  };

  // A client session on `fd` (connected, non-blocking; not closed by the session), set up by
  // ctx.prepare(ssl, host) (SNI, the name to verify). `ctx` must outlive the session. Throws
  // std::runtime_error if OpenSSL cannot allocate it.
  TlsSession(const TlsContext& ctx, int fd, const std::string& host);
  ~TlsSession();
  TlsSession(TlsSession&&) noexcept;
  TlsSession& operator=(TlsSession&&) noexcept;

  // One step of the handshake; done once it is complete. A refused certificate is `error`
  // with error() = "certificate verify failed: <OpenSSL's reason>".
  Io handshake();
  // Decrypts up to cap bytes into buf; done with *n > 0.
  Io read(char* buf, size_t cap, size_t* n);
  // Encrypts from buf (len > 0); done with *n bytes taken (maybe fewer than len). After
  // want_read / want_write, call again with the same bytes (at least the same first *n).
  Io write(const char* buf, size_t len, size_t* n);
  // Decrypted bytes waiting inside OpenSSL (read them before waiting for the socket).
  size_t pending() const;
  // One line on the last `error` result.
  const std::string& error() const { return error_; }
  // Blocking convenience for connect time: runs handshake() to completion, polling the socket,
  // until deadline_us (kv::steady_us()). False with error() set on failure or timeout.
  bool handshake_until(int64_t deadline_us);

 private:
  Io result(int ret, const char* what);
  struct Free {
    void operator()(ssl_st* s) const noexcept;
  };
  std::unique_ptr<ssl_st, Free> ssl_;
  int fd_ = -1;
  std::string error_;
};

}  // namespace kv::drive::store
