// Test certificates, made at test time with the openssl command in a temp dir: a CA, a server
// certificate it signed for "localhost" and 127.0.0.1, a client certificate it signed, and a
// second, unrelated CA (trusting it must fail verification). EC P-256 keys, valid for a day.
#pragma once

#include <string>

#include "servers.hpp"

namespace kv::test {

class TestCertificates {
 public:
  // Returns false (and sets `why`) when the openssl command is missing; throws if it fails.
  bool make(std::string* why);

  std::string ca_cert() const { return dir_.file("ca.crt"); }
  std::string server_cert() const { return dir_.file("server.crt"); }
  std::string server_key() const { return dir_.file("server.key"); }
  std::string client_cert() const { return dir_.file("client.crt"); }
  std::string client_key() const { return dir_.file("client.key"); }
  std::string other_ca_cert() const { return dir_.file("other-ca.crt"); }
  const TempDir& dir() const { return dir_; }

  // redis-server arguments for a TLS-only server on StoreServer's port, asking clients for a
  // certificate signed by the CA when require_client_cert.
  std::vector<std::string> redis_args(bool require_client_cert) const;
  // memcached arguments for TLS on its port (no client certificate asked).
  std::vector<std::string> memcached_args() const;

 private:
  void openssl(const std::vector<std::string>& args) const;
  void make_ca(const std::string& name, const std::string& cn) const;
  void make_signed(const std::string& name, const std::string& cn, const std::string& ext) const;
  std::string openssl_;
  TempDir dir_;
};

}  // namespace kv::test
