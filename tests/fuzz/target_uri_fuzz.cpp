// libFuzzer target for store target URIs (driver/store/target_uri.hpp). Only std::invalid_argument
// may escape. A parsed URI has 1..N servers (exactly one for redis) with non-empty hosts and ports
// 1..65535, a db in 0..1000000, and its display form and its redact_uri_passwords form (the
// stored command line) parse back to the same target with password ***. docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "store/target_uri.hpp"

using kv::drive::Protocol;
using kv::drive::TargetSpec;

namespace {

bool same_servers(const TargetSpec& a, const TargetSpec& b) {
  if (a.servers.size() != b.servers.size()) return false;
  for (size_t i = 0; i < a.servers.size(); ++i)
    if (a.servers[i].host != b.servers[i].host || a.servers[i].port != b.servers[i].port)
      return false;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view uri(reinterpret_cast<const char*>(data), size);
  TargetSpec t;
  try {
    t = kv::drive::parse_target_uri(uri);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (t.servers.empty()) std::abort();
  if (t.protocol == Protocol::redis && !t.cluster && t.servers.size() != 1)
    std::abort();  // cluster: seeds
  for (const auto& s : t.servers)
    if (s.host.empty() || s.port < 1 || s.port > 65535) std::abort();
  if (t.db < 0 || t.db > 1'000'000) std::abort();
  if (t.protocol == Protocol::memcached && (!t.password.empty() || !t.user.empty() || t.db != 0))
    std::abort();
  // The display form is what reaches the results file and the terminal.
  TargetSpec d;
  try {
    d = kv::drive::parse_target_uri(t.display);
  } catch (const std::invalid_argument&) {
    std::abort();  // the stored form of a valid target must stay valid
  }
  if (d.protocol != t.protocol || !same_servers(d, t) || d.db != t.db || d.user != t.user ||
      d.binary_protocol != t.binary_protocol || d.tcp_nodelay != t.tcp_nodelay)
    std::abort();
  if (!t.password.empty() && d.password != "***") std::abort();
  if (t.password.empty() && !d.password.empty()) std::abort();
  // The same for the command line stored in runs.command_line (one argument redacted).
  TargetSpec r;
  try {
    r = kv::drive::parse_target_uri(kv::drive::redact_uri_passwords(std::string(uri)));
  } catch (const std::invalid_argument&) {
    std::abort();
  }
  if (!same_servers(r, t) || r.user != t.user || r.db != t.db) std::abort();
  if (!t.password.empty() && r.password != "***") std::abort();
  return 0;
}
