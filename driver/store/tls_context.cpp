#include "store/tls_context.hpp"

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/ssl/context.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "kvbench/usage_error.hpp"

namespace kv::drive::store {
namespace {

namespace ssl = boost::asio::ssl;

[[noreturn]] void bad(const std::string& what) { throw UsageError(what); }

// The last OpenSSL error's reason ("no certificate or crl found"), and clears the queue.
std::string openssl_reason() {
  unsigned long e = ERR_peek_last_error();
  ERR_clear_error();
  if (e == 0) return "unknown error";
  const char* r = ERR_reason_error_string(e);
  return r ? r : "error " + std::to_string(e);
}

// Fails with one line unless `path` is a readable regular file.
void check_readable(const std::string& label, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) bad(label + " '" + path + "': cannot read it (" + std::strerror(errno) + ")");
  std::fclose(f);
}

// How many PEM certificates the file holds (0 for a key, DER or garbage).
int count_pem_certificates(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return 0;
  int n = 0;
  while (X509* x = PEM_read_X509(f, nullptr, nullptr, nullptr)) {
    X509_free(x);
    ++n;
  }
  std::fclose(f);
  ERR_clear_error();  // the read that ended the loop
  return n;
}

// The first PEM private key in the file (unencrypted), or null; the caller frees it.
EVP_PKEY* read_private_key(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (!f) return nullptr;
  EVP_PKEY* k = PEM_read_PrivateKey(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  ERR_clear_error();
  return k;
}

bool is_ip_literal(const std::string& host) {
  unsigned char buf[sizeof(in6_addr)];
  return inet_pton(AF_INET, host.c_str(), buf) == 1 || inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

}  // namespace

TlsContext::TlsContext(const TlsOptions& opts)
    : opts_(opts), ctx_(std::make_unique<ssl::context>(ssl::context::tls_client)) {
  SSL_CTX* c = ctx_->native_handle();
  SSL_CTX_set_min_proto_version(c, TLS1_2_VERSION);
  if (!opts_.ca_file.empty()) {
    check_readable("TLS CA file", opts_.ca_file);
    if (count_pem_certificates(opts_.ca_file) == 0)
      bad("TLS CA file '" + opts_.ca_file + "': no PEM certificate in it");
    if (SSL_CTX_load_verify_locations(c, opts_.ca_file.c_str(), nullptr) != 1)
      bad("TLS CA file '" + opts_.ca_file + "': " + openssl_reason());
  } else if (opts_.verify && SSL_CTX_set_default_verify_paths(c) != 1) {
    bad("TLS: cannot load the system's CA certificates: " + openssl_reason());
  }
  if (!opts_.cert_file.empty()) {
    check_readable("TLS client certificate", opts_.cert_file);
    if (count_pem_certificates(opts_.cert_file) == 0)
      bad("TLS client certificate '" + opts_.cert_file + "': no PEM certificate in it");
    if (SSL_CTX_use_certificate_chain_file(c, opts_.cert_file.c_str()) != 1)
      bad("TLS client certificate '" + opts_.cert_file + "': " + openssl_reason());
    const std::string& key = opts_.key_file.empty() ? opts_.cert_file : opts_.key_file;
    check_readable("TLS client key", key);
    EVP_PKEY* pkey = read_private_key(key);
    if (!pkey) bad("TLS client key '" + key + "': no PEM private key in it");
    bool ok = SSL_CTX_use_PrivateKey(c, pkey) == 1 && SSL_CTX_check_private_key(c) == 1;
    EVP_PKEY_free(pkey);  // the context holds its own reference
    if (!ok) {
      ERR_clear_error();
      bad("TLS client key '" + key + "' does not match certificate '" + opts_.cert_file + "'");
    }
  } else if (!opts_.key_file.empty()) {
    bad("TLS client key '" + opts_.key_file + "' given without a certificate");
  }
  SSL_CTX_set_verify(c, opts_.verify ? SSL_VERIFY_PEER : SSL_VERIFY_NONE, nullptr);
}

TlsContext::~TlsContext() = default;

boost::asio::ssl::context& TlsContext::asio_context() const { return *ctx_; }

void TlsContext::prepare(ssl_st* s, const std::string& host) const {
  const std::string& name = opts_.server_name.empty() ? host : opts_.server_name;
  bool ip = is_ip_literal(name);
  // SSL_set_tlsext_host_name without its macro's C cast.
  if (!ip && SSL_ctrl(s, SSL_CTRL_SET_TLSEXT_HOSTNAME, TLSEXT_NAMETYPE_host_name,
                      const_cast<char*>(name.c_str())) != 1)
    throw std::runtime_error("TLS: cannot set the server name '" + name + "'");
  if (!opts_.verify) return;
  X509_VERIFY_PARAM* param = SSL_get0_param(s);
  int ok = ip ? X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str())
              : X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size());
  if (ok != 1) throw std::runtime_error("TLS: cannot verify against the name '" + name + "'");
}

std::string tls_handshake_error(ssl_st* s, const std::string& what) {
  long v = s ? SSL_get_verify_result(s) : X509_V_OK;
  if (v == X509_V_OK) return what;
  return what + ": " + X509_verify_cert_error_string(v);
}

}  // namespace kv::drive::store
