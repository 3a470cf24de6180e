// Store targets as URIs: redis://[user:password@]host:port[/db] and
// memcached://host:port[,host:port...][?protocol=binary|text&nodelay=0|1].
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kv::drive {

enum class Protocol { redis, memcached };

struct HostPort {
  std::string host;
  int port = 0;
};

struct TargetSpec {
  Protocol protocol = Protocol::redis;
  std::vector<HostPort> servers;  // one for redis; a ketama pool for memcached
  std::string user;               // redis ACL user (empty: default user)
  std::string password;           // redis AUTH password (empty: none)
  int db = 0;                     // redis SELECT
  bool binary_protocol = false;   // memcached binary protocol
  bool tcp_nodelay = true;        // off shows the Nagle / delayed-ACK stall
  std::string display;            // the URI without its password, as stored and printed
};

// Throws std::invalid_argument naming the URI and what is wrong with it.
TargetSpec parse_target_uri(std::string_view uri);
const char* protocol_name(Protocol p);

// One command-line argument with the password of every redis:// URI in it replaced by ***, the
// way parse_target_uri reads it (query from the first '?', user info up to the last '@', the
// password after the first ':'), so a password holding '/', ' ' or '\'' is hidden too.
std::string redact_uri_passwords(std::string arg);

}  // namespace kv::drive
