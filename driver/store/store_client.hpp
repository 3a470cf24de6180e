// StoreClient: one connection (or one pool, for memcached) to a key-value store, used by one
// worker thread. Failures on the request path are returned as a status and counted, never
// thrown; after an error the client drops its connection and reconnects on the next request.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kvbench/result.hpp"
#include "store/op_status.hpp"
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
  virtual OpStatus set(std::string_view key, std::string_view value, uint32_t ttl_s) = 0;
  // On a hit, *value views the value's bytes, valid until the next call on this client.
  virtual OpStatus get(std::string_view key, std::string_view* value) = 0;
  // The server's version as it reports it; empty if unknown.
  virtual std::string server_version() = 0;
  // The server's settings that shape a benchmark, under the server's own names (Redis CONFIG
  // GET maxmemory, maxmemory-policy, save, appendonly, appendfsync, io-threads; memcached
  // `stats settings` maxbytes, num_threads, item_size_max, ...). A setting the server does not
  // give (CONFIG renamed or refused, an older server) is left out. Empty if unknown.
  virtual std::vector<std::pair<std::string, std::string>> server_config() { return {}; }

  // Pipelining (only where supports_pipelining()): queue requests with send_set / send_get,
  // put them on the wire with flush(), call finish_send() (after flushing every connection of
  // the worker), then take their results in order with receive() (one call per queued request;
  // *value views a get's bytes until the next call). After an error every remaining receive()
  // of the batch returns error and the connection is rebuilt.
  virtual bool supports_pipelining() const { return false; }
  // Follows Redis Cluster redirects (and counts them, StatsSlot::add_redirect).
  virtual bool follows_redirects() const { return false; }
  virtual void send_set(std::string_view /*key*/, std::string_view /*value*/, uint32_t /*ttl_s*/) {}
  virtual void send_get(std::string_view /*key*/) {}
  virtual void flush() {}
  // The part of a batch that can only leave once earlier replies are in (libmemcached sends a
  // batch's multi-get after reading its buffered sets' replies); a no-op where all left at flush.
  virtual void finish_send() {}
  virtual OpStatus receive(std::string_view* /*value*/) { return OpStatus::error; }

  // Thread-safe; called from another thread than the worker's (Ctrl-C). A request blocked on
  // this client (a stalled store) gives up within milliseconds instead of waiting out its
  // timeout, and every later request returns at once; all of them return
  // OpStatus::interrupted. Irreversible: the client is not used again.
  void interrupt() { sockets_.interrupt(); }
  bool interrupted() const { return sockets_.interrupted(); }
  // Requests that returned OpStatus::interrupted after (part of) them had been sent: the store
  // may have counted them although kvdrive did not. Read once the worker has stopped.
  uint64_t abandoned() const { return abandoned_; }

 protected:
  // The sockets a blocked request may be waiting on. interrupt() shuts them down (the fd stays
  // open, so the worker's library sees a closed connection and returns), which is how a
  // library whose wait cannot be sliced (libmemcached) is woken. The worker publishes its
  // connection's sockets once they are known and withdraws them before it closes them.
  class Sockets {
   public:
    void publish(std::vector<int> fds);
    void withdraw() { publish({}); }
    void interrupt();
    bool interrupted() const { return interrupted_.load(std::memory_order_relaxed); }

   private:
    std::mutex mu_;  // taken on (re)connect and on interrupt only, never per request
    std::vector<int> fds_;
    std::atomic<bool> interrupted_{false};
  };
  // What a request that failed returns: interrupted if interrupt() was called (the failure is
  // the shutdown, or came after it), else `st`. Counts the abandoned request.
  OpStatus failed_as(OpStatus st) {
    if (!interrupted()) return st;
    ++abandoned_;
    return OpStatus::interrupted;
  }

  Sockets sockets_;
  uint64_t abandoned_ = 0;
};

// Creates the client for spec.protocol. Does not connect.
std::unique_ptr<StoreClient> make_store_client(const TargetSpec& spec, const ClientOptions& opts);

// Makes and connects `n` clients to the target; throws std::runtime_error naming it if any
// cannot connect.
std::vector<std::unique_ptr<StoreClient>> connect_clients(const TargetSpec& spec, int n,
                                                          const ClientOptions& opts);

}  // namespace kv::drive
