#include "store/target_uri.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>
#include <string>
#include <utility>

#include "kvbench/usage_error.hpp"

namespace kv::drive {
namespace {

[[noreturn]] void bad(std::string_view uri, const std::string& why) {
  throw UsageError("invalid target '" + std::string(uri) + "': " + why);
}

int parse_int(std::string_view uri, std::string_view text, const char* what, int lo, int hi) {
  int v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v < lo || v > hi)
    bad(uri, std::string(what) + " '" + std::string(text) + "' is not a number from " +
                 std::to_string(lo) + " to " + std::to_string(hi));
  return v;
}

HostPort parse_host_port(std::string_view uri, std::string_view hp, int default_port) {
  auto parsed = proto::split_host_port(hp, default_port);
  if (!parsed) bad(uri, parsed.error().message);
  return std::move(parsed).value();
}

}  // namespace

std::string host_port(const HostPort& s) {
  const bool v6 = s.host.find(':') != std::string::npos;
  std::string out = v6 ? "[" + s.host + "]" : s.host;
  out += ':';
  out += std::to_string(s.port);
  return out;
}

const char* protocol_name(Protocol p) { return p == Protocol::redis ? "redis" : "memcached"; }

namespace {

// The URI's ?key=value&... options, into t (`scheme` decides what tls=0 means).
void apply_options(TargetSpec& t, std::string_view uri, std::string_view scheme,
                   std::string_view query) {
  while (!query.empty()) {
    auto amp = query.find('&');
    std::string_view kv = query.substr(0, amp);
    auto eq = kv.find('=');
    std::string_view key = kv.substr(0, eq);
    std::string_view val = eq == std::string_view::npos ? "" : kv.substr(eq + 1);
    if (key == "protocol" && t.protocol == Protocol::memcached &&
        (val == "binary" || val == "text"))
      t.binary_protocol = val == "binary";
    else if (key == "nodelay" && (val == "0" || val == "1"))
      t.tcp_nodelay = val == "1";
    else if (key == "writes" && (val == "one" || val == "split"))
      t.split_writes = val == "split";
    else if (key == "read-from" && (val == "master" || val == "replica"))
      t.read_from_replica = val == "replica";
    else if (key == "on-failure" && (val == "keep" || val == "eject"))
      t.eject_on_failure = val == "eject";
    else if (key == "tls" && (val == "0" || val == "1"))
      t.tls.enabled = val == "1" || scheme.substr(0, 6) == "rediss";
    else if (key == "verify" && (val == "0" || val == "1"))
      t.tls.verify = val == "1";
    else if ((key == "ca" || key == "cert" || key == "key" || key == "sni") && !val.empty())
      (key == "ca"     ? t.tls.ca_file
       : key == "cert" ? t.tls.cert_file
       : key == "key"  ? t.tls.key_file
                       : t.tls.server_name) = std::string(val);
    else
      bad(uri, "unknown option '" + std::string(kv) +
                   "' (expected protocol=binary|text for memcached, nodelay=0|1, "
                   "writes=one|split, on-failure=keep|eject for a memcached pool, "
                   "read-from=master|replica "
                   "for a Redis Cluster, tls=0|1, "
                   "ca=FILE, cert=FILE, key=FILE, sni=NAME, verify=0|1)");
    if (amp == std::string_view::npos) break;
    query = query.substr(amp + 1);
  }
}

// Options that do not go together, or with this target.
void check_options(const TargetSpec& t, std::string_view uri) {
  if (t.eject_on_failure && (t.protocol != Protocol::memcached || t.servers.size() < 2))
    bad(uri, "on-failure=eject is for a memcached pool of several servers");
  if (t.read_from_replica && !t.cluster)
    bad(uri, "read-from=replica is for a Redis Cluster (redis+cluster://)");
  const TlsOptions& tls = t.tls;
  if (!tls.enabled && (!tls.ca_file.empty() || !tls.cert_file.empty() || !tls.key_file.empty() ||
                       !tls.server_name.empty() || !tls.verify))
    bad(uri, "ca=, cert=, key=, sni= and verify= need TLS (rediss:// or tls=1)");
  if (!tls.key_file.empty() && tls.cert_file.empty()) bad(uri, "key= needs cert=");
  if (t.split_writes && tls.enabled) bad(uri, "writes=split is for plain TCP, not TLS");
}

}  // namespace

TargetSpec parse_target_uri(std::string_view uri) {
  TargetSpec t;
  auto sep = uri.find("://");
  if (sep == std::string_view::npos)
    bad(uri, "expected redis://host:port or memcached://host:port");
  std::string_view scheme = uri.substr(0, sep);
  std::string_view rest = uri.substr(sep + 3);
  if (scheme == "redis" || scheme == "rediss" || scheme == "redis+cluster" ||
      scheme == "rediss+cluster") {
    t.protocol = Protocol::redis;
    t.tls.enabled = scheme.substr(0, 6) == "rediss";
    t.cluster = scheme.size() > 6 && scheme.back() == 'r';
  } else if (scheme == "memcached") {
    t.protocol = Protocol::memcached;
  } else {
    bad(uri, "unknown scheme '" + std::string(scheme) +
                 "' (expected redis, rediss, redis+cluster, rediss+cluster or memcached)");
  }

  std::string_view query;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  std::string_view userinfo;
  if (auto at = rest.rfind('@'); at != std::string_view::npos) {
    if (t.protocol != Protocol::redis) bad(uri, "memcached targets take no user or password");
    userinfo = rest.substr(0, at);
    rest = rest.substr(at + 1);
    auto colon = userinfo.find(':');
    if (colon == std::string_view::npos) {
      t.password = std::string(userinfo);  // redis://password@host:port
    } else {
      t.user = std::string(userinfo.substr(0, colon));
      t.password = std::string(userinfo.substr(colon + 1));
    }
  }
  std::string_view path;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    path = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  if (!path.empty()) {
    if (t.protocol != Protocol::redis) bad(uri, "memcached targets take no /db");
    t.db = parse_int(uri, path, "database", 0, 1'000'000);
  }
  // A server without a port gets the protocol's own (redis://localhost, as redis-cli and
  // memcached's clients take it).
  const int default_port =
      t.protocol == Protocol::redis ? kDefaultRedisPort : kDefaultMemcachedPort;
  while (!rest.empty()) {
    auto comma = rest.find(',');
    t.servers.push_back(parse_host_port(uri, rest.substr(0, comma), default_port));
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
    if (rest.empty()) bad(uri, "empty server after ','");
  }
  if (t.servers.empty()) bad(uri, "missing host:port");
  if (t.protocol == Protocol::redis && !t.cluster && t.servers.size() > 1)
    bad(uri, "a redis target has one server (benchmark several with several --target)");
  if (t.cluster && t.db != 0) bad(uri, "a Redis Cluster has only database 0");

  apply_options(t, uri, scheme, query);
  check_options(t, uri);

  t.display = std::string(uri);
  if (!t.password.empty()) {
    auto at = t.display.rfind('@');
    t.display = std::string(scheme) + "://" + (t.user.empty() ? "" : t.user + ":") + "***" +
                t.display.substr(at);
  }
  return t;
}

namespace {
// The position just past the next "redis://" (or rediss://, redis+cluster://,
// rediss+cluster://) at or after `from`; npos if none.
size_t next_redis_uri(const std::string& arg, size_t from) {
  for (size_t sep = arg.find("://", from); sep != std::string::npos;
       sep = arg.find("://", sep + 3)) {
    for (std::string_view scheme : {"rediss+cluster", "redis+cluster", "rediss", "redis"}) {
      if (sep >= scheme.size() && arg.compare(sep - scheme.size(), scheme.size(), scheme) == 0)
        return sep + 3;
    }
  }
  return std::string::npos;
}
}  // namespace

std::string redact_uri_passwords(std::string arg) {
  for (size_t start = next_redis_uri(arg, 0); start != std::string::npos;) {
    size_t end = std::min(arg.find('?', start), arg.size());
    std::string_view uri(arg.data() + start, end - start);
    if (auto at = uri.rfind('@'); at != std::string_view::npos) {
      auto colon = uri.substr(0, at).find(':');
      size_t secret = colon == std::string_view::npos ? 0 : colon + 1;
      arg.replace(start + secret, at - secret, "***");
      end = start + secret + 3 + (uri.size() - at);
    }
    start = next_redis_uri(arg, end);
  }
  return arg;
}

std::string strip_uri_passwords(std::string arg) {
  for (size_t start = next_redis_uri(arg, 0); start != std::string::npos;) {
    size_t end = std::min(arg.find('?', start), arg.size());
    std::string_view uri(arg.data() + start, end - start);
    if (auto at = uri.rfind('@'); at != std::string_view::npos) {
      auto colon = uri.substr(0, at).find(':');
      if (colon == std::string_view::npos) {  // redis://pw@host: no user left
        arg.erase(start, at + 1);
        end = start + (uri.size() - at - 1);
      } else {  // redis://user:pw@host -> redis://user:@host
        arg.erase(start + colon + 1, at - colon - 1);
        end = start + colon + 1 + (uri.size() - at);
      }
    }
    start = next_redis_uri(arg, end);
  }
  return arg;
}

std::string with_uri_password(const std::string& uri, const std::string& password) {
  if (password.find('?') != std::string::npos)
    throw UsageError("a password with '?' goes in a --target URI only (it would end the address)");
  const size_t start = next_redis_uri(uri, 0);
  if (start == std::string::npos) return uri;
  const size_t end = std::min(uri.find('?', start), uri.size());
  const std::string_view rest(uri.data() + start, end - start);
  const size_t at = rest.rfind('@');
  if (at == std::string_view::npos)
    return uri.substr(0, start) + ":" + password + "@" + uri.substr(start);
  // redis://user:@host (a user, no password): after the colon
  const size_t colon = rest.substr(0, at).find(':');
  if (colon == std::string_view::npos || colon + 1 != at) return uri;  // it has one
  return uri.substr(0, start + colon + 1) + password + uri.substr(start + colon + 1);
}

std::string target_password_env(size_t ordinal) {
  return "KVDRIVE_TARGET_PASSWORD_" + std::to_string(ordinal);
}

}  // namespace kv::drive
