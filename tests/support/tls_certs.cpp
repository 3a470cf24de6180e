#include "tls_certs.hpp"

#include <fstream>
#include <stdexcept>

namespace kv::test {

void TestCertificates::openssl(const std::vector<std::string>& args) const {
  std::vector<std::string> argv{openssl_};
  argv.insert(argv.end(), args.begin(), args.end());
  Process p(argv, dir_.file("openssl.log"));
  int rc = p.wait(60'000);
  if (rc != 0)
    throw std::runtime_error("openssl " + args.front() + " failed (exit " + std::to_string(rc) +
                             "; see " + dir_.file("openssl.log") + ")");
}

void TestCertificates::make_ca(const std::string& name, const std::string& cn) const {
  openssl({"req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
           "-keyout", dir_.file(name + ".key"), "-out", dir_.file(name + ".crt"), "-days", "1",
           "-subj", "/CN=" + cn, "-addext", "basicConstraints=critical,CA:TRUE", "-addext",
           "keyUsage=critical,keyCertSign,cRLSign"});
}

void TestCertificates::make_signed(const std::string& name, const std::string& cn,
                                   const std::string& ext) const {
  openssl({"req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout",
           dir_.file(name + ".key"), "-out", dir_.file(name + ".csr"), "-subj", "/CN=" + cn});
  std::ofstream(dir_.file(name + ".ext")) << ext << "\n";
  openssl({"x509", "-req", "-in", dir_.file(name + ".csr"), "-CA", ca_cert(), "-CAkey",
           dir_.file("ca.key"), "-CAcreateserial", "-out", dir_.file(name + ".crt"), "-days", "1",
           "-extfile", dir_.file(name + ".ext")});
}

bool TestCertificates::make(std::string* why) {
  openssl_ = find_program("openssl");
  if (openssl_.empty()) {
    *why = "openssl is not installed (apt-get install openssl)";
    return false;
  }
  make_ca("ca", "kvbench test CA");
  make_ca("other-ca", "kvbench other CA");
  make_signed("server", "localhost",
              "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth");
  make_signed("client", "kvbench client", "extendedKeyUsage=clientAuth");
  return true;
}

std::vector<std::string> TestCertificates::redis_args(bool require_client_cert) const {
  return {"--port",
          "0",
          "--tls-port",
          "{port}",
          "--tls-cert-file",
          server_cert(),
          "--tls-key-file",
          server_key(),
          "--tls-ca-cert-file",
          ca_cert(),
          "--tls-auth-clients",
          require_client_cert ? "yes" : "no"};
}

std::vector<std::string> TestCertificates::memcached_args() const {
  return {"-Z", "-o", "ssl_chain_cert=" + server_cert() + ",ssl_key=" + server_key()};
}

}  // namespace kv::test
