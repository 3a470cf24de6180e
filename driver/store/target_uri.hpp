// Store targets as URIs: redis://[user:password@]host:port[/db] and
// memcached://host:port[,host:port...][?protocol=binary|text&nodelay=0|1&writes=one|split].
// TLS: rediss://, or
// ?tls=1 on either, with ?ca=, cert=, key=, sni=, verify=0|1 (see TlsOptions). Redis Cluster:
// redis+cluster://seed:port (rediss+cluster:// over TLS), one seed node of the cluster.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kvbench/protocol.hpp"

namespace kv::drive {

enum class Protocol { redis, memcached };

// One address type and parser for both programs (kvbench/protocol.hpp).
using HostPort = proto::HostPort;

// How to open TLS connections to a target. File paths are taken as given (checked when the TLS
// context is built: store/tls_context.hpp).
struct TlsOptions {
  bool enabled = false;     // rediss://, or ?tls=1
  std::string ca_file;      // ?ca=PATH: PEM CA certificates to trust (empty: the system's store)
  std::string cert_file;    // ?cert=PATH: PEM client certificate (chain), for mutual TLS
  std::string key_file;     // ?key=PATH: PEM private key of cert (empty: in the cert file)
  std::string server_name;  // ?sni=NAME: sent as SNI and verified (empty: the target's host)
  bool verify = true;       // ?verify=0: no check of the server's certificate or name (insecure)
};

struct TargetSpec {
  Protocol protocol = Protocol::redis;
  std::vector<HostPort> servers;  // one for redis; a ketama pool for memcached
  std::string user;               // redis ACL user (empty: default user)
  std::string password;           // redis AUTH password (empty: none)
  int db = 0;                     // redis SELECT
  bool binary_protocol = false;   // memcached binary protocol
  bool tcp_nodelay = true;        // off: Nagle's algorithm (see split_writes)
  // ?writes=split: a set's command line (header) and its value go out in two send()s, as the
  // clients of the seed study's era wrote them; with nodelay=0 the value's last, short segment
  // then waits for the server's delayed ACK of the first (docs/reference.md, `--target`).
  bool split_writes = false;
  TlsOptions tls;
  bool cluster = false;  // redis+cluster://: the server is a seed; keys go by slot
  // A memcached pool, ?on-failure=eject: a server whose connect failed leaves the ring and its
  // keys go to the next servers on it until a probe finds it again (libmemcached's auto-eject);
  // the default keeps each key on its server and fails its requests at once meanwhile.
  bool eject_on_failure = false;
  // A Redis Cluster, ?read-from=replica: gets go to a replica of the key's master (every
  // connection sends READONLY first), sets to the master.
  bool read_from_replica = false;
  std::string display;  // the URI without its password, as stored and printed
};

// The port of a server given without one (redis://localhost, memcached://cache1).
inline constexpr int kDefaultRedisPort = 6379;
inline constexpr int kDefaultMemcachedPort = 11211;

// Throws UsageError naming the URI and what is wrong with it. Host and port follow
// proto::split_host_port's rules, the port defaulting to the protocol's own.
TargetSpec parse_target_uri(std::string_view uri);
// "host:port", "[::1]:port": a server as store_stats prefixes and pool_server_seconds name it.
std::string host_port(const HostPort& s);
const char* protocol_name(Protocol p);

// One command-line argument with the password of every redis:// URI in it replaced by ***, the
// way parse_target_uri reads it (query from the first '?', user info up to the last '@', the
// password after the first ':'), so a password holding '/', ' ' or '\'' is hidden too.
std::string redact_uri_passwords(std::string arg);
// The same argument with those passwords removed (redis://user:pw@h -> redis://user:@h,
// redis://pw@h -> redis://h): for a child's argv, which every user of the host can read.
std::string strip_uri_passwords(std::string arg);
// `uri` (a redis URI without a password) with `password` in it, for the default user or the
// URI's user; throws UsageError when the password holds '?' (it would end the address).
std::string with_uri_password(const std::string& uri, const std::string& password);
// The environment variable through which a --processes parent hands process its target
// `ordinal`'s password (never its argv).
std::string target_password_env(size_t ordinal);

}  // namespace kv::drive
