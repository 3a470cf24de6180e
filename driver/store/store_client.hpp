// StoreClient: one connection (or one pool, for memcached; one set of node connections, for a
// Redis Cluster) to a key-value store, used by one worker thread at a time. The one
// implementation is the event-loop engine's EventClient (engine/loop/event_client.hpp); the
// blocking hiredis / libmemcached clients it replaced were removed (#16).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvbench/result.hpp"
#include "store/target_uri.hpp"

namespace kv::drive {

struct ClientOptions {
  int64_t timeout_us = 5'000'000;  // per request and per connect
  int64_t reconnect_backoff_max_us = 2'000'000;
};

class StoreClient {
 public:
  virtual ~StoreClient() = default;
  // Connects (and authenticates / selects the database). Error: why, naming the server.
  virtual Result<void> connect() = 0;
  // The server's version as it reports it; empty if unknown.
  virtual std::string server_version() = 0;
  // Follows Redis Cluster redirects (and counts them, StatsSlot::add_redirect).
  virtual bool follows_redirects() const { return false; }
  // A memcached pool: its servers as HOST:PORT, in the URI's order (the per-server counts,
  // StatsSlot::add_pool); empty for any other target.
  virtual std::vector<std::string> pool_servers() const { return {}; }

  // Requests given up at an interrupt after (part of) them had been sent: the store may have
  // counted them although kvdrive did not. Read once the worker has stopped.
  uint64_t abandoned() const { return abandoned_; }

 protected:
  uint64_t abandoned_ = 0;
};

}  // namespace kv::drive
