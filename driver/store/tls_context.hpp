// TLS for store connections: one client context per target, built from its TlsOptions (CA,
// client certificate and key, verification), and the per-connection setup (SNI, the name or IP
// address the server's certificate must hold). Asio and OpenSSL are included only by
// tls_context.cpp and the files that open TLS streams; this header forward-declares them.
#pragma once

#include <memory>
#include <string>

#include "store/target_uri.hpp"

namespace boost::asio::ssl {
class context;
}
struct ssl_st;  // OpenSSL's SSL

namespace kv::drive::store {

class TlsContext {
 public:
  // Builds a TLS 1.2+ client context: trusts the PEM certificates of opts.ca_file (or, when
  // empty, the system's default store), presents opts.cert_file / opts.key_file (the key may be
  // in the cert file) and checks that they match, and verifies the server unless !opts.verify.
  // Throws UsageError with one line naming the file and the problem, e.g.
  // "TLS CA file '/x.pem': cannot read it (No such file or directory)",
  // "TLS CA file '/x.pem': no PEM certificate in it",
  // "TLS client key '/k.pem' does not match certificate '/c.pem'".
  explicit TlsContext(const TlsOptions& opts);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  // For asio::ssl::stream. Shared by every connection of the target; OpenSSL contexts may be
  // used from several threads once built (nothing here changes them after construction).
  boost::asio::ssl::context& asio_context() const;
  const TlsOptions& options() const { return opts_; }

  // Sets up one connection's SSL before its handshake: SNI = options().server_name, else `host`
  // when it is a DNS name (never for an IP literal); when verifying, the DNS name (or IP
  // address) the server's certificate must hold. Throws std::runtime_error if OpenSSL refuses.
  void prepare(ssl_st* ssl, const std::string& host) const;

 private:
  TlsOptions opts_;
  std::unique_ptr<boost::asio::ssl::context> ctx_;
};

// One line for a failed handshake: `what` (Asio's message of the error, e.g. "certificate
// verify failed (SSL routines)") and, when the server's certificate was refused, OpenSSL's
// verify result ("unable to get local issuer certificate", "hostname mismatch").
std::string tls_handshake_error(ssl_st* ssl, const std::string& what);

}  // namespace kv::drive::store
