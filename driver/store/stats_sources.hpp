// One target's servers as the store-stats poller sees them: for each, a connection kept
// between polls that returns the server's counters, and what the poller knows of it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kvbench/result.hpp"
#include "store/stat_sample.hpp"
#include "store/target_uri.hpp"

namespace kv::drive {

using Values = std::vector<StatValue>;

class StatsSource {
 public:
  virtual ~StatsSource() = default;
  // This server's counters; the whole call takes at most about timeout_us. After an error the
  // connection is dropped and the next call connects anew.
  virtual Result<Values> poll(int64_t timeout_us) = 0;
};

// memcached's counters over a plain socket ("stats"; stats_memcached.cpp). `server` outlives
// the source.
std::unique_ptr<StatsSource> memcached_stats_source(const HostPort& server);

// One server of the target, with what the poller knows about it.
struct StatsServer {
  std::unique_ptr<StatsSource> source;
  std::string label;   // "redis 127.0.0.1:6379", for log lines
  std::string prefix;  // "host:port/" in a pool of several, else empty
  bool down = false;   // the last poll failed (and that was logged)
};

// The servers to poll for target `t`: the Redis server, each server of a memcached pool, or
// each master of a Redis Cluster (from CLUSTER SLOTS of the first seed that answers within
// timeout_us; the seeds when none does), over TLS when the target says so. Names are prefixed
// "host:port/" for a cluster and for a pool of several. Throws what TlsContext throws for a bad
// CA, certificate or key file. Connects to nothing but a cluster's seeds.
std::vector<StatsServer> make_stats_servers(const TargetSpec& t, int64_t timeout_us);

// The store's settings that shape a benchmark, under its own names, read once at the start of
// a run over a connection of their own: Redis CONFIG GET maxmemory, maxmemory-policy, save,
// appendonly, appendfsync, io-threads (plain or TLS, AUTH / SELECT as the target says; a
// cluster's first seed); memcached `stats settings` (plain or TLS). A setting the
// server does not give (CONFIG refused or renamed, an older server) is left out. Throws
// std::runtime_error (one line) when the server cannot be reached or refuses the connection.
std::vector<std::pair<std::string, std::string>> read_store_settings(const TargetSpec& t,
                                                                     int64_t timeout_us);

}  // namespace kv::drive
