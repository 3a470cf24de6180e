// StoreClient: one connection (or one pool, for memcached) to a key-value store, used by one
// worker thread. Failures on the request path are returned as a status and counted, never
// thrown; after an error the client drops its connection and reconnects on the next request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "kvbench/result.hpp"
#include "target_uri.hpp"

namespace kv::drive {

enum class OpStatus : uint8_t { ok, hit, miss, error, timeout };

struct ClientOptions {
  int64_t timeout_us = 5'000'000;          // per request and per connect
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

  // Pipelining (only where supports_pipelining()): queue requests with send_set / send_get,
  // put them on the wire with flush(), call finish_send() (after flushing every connection of
  // the worker), then take their results in order with receive() (one call per queued request;
  // *value views a get's bytes until the next call). After an error every remaining receive()
  // of the batch returns error and the connection is rebuilt.
  virtual bool supports_pipelining() const { return false; }
  virtual void send_set(std::string_view /*key*/, std::string_view /*value*/, uint32_t /*ttl_s*/) {}
  virtual void send_get(std::string_view /*key*/) {}
  virtual void flush() {}
  // The part of a batch that can only leave once earlier replies are in (libmemcached sends a
  // batch's multi-get after reading its buffered sets' replies); a no-op where all left at flush.
  virtual void finish_send() {}
  virtual OpStatus receive(std::string_view* /*value*/) { return OpStatus::error; }
};

// Creates the client for spec.protocol. Does not connect.
std::unique_ptr<StoreClient> make_store_client(const TargetSpec& spec, const ClientOptions& opts);

}  // namespace kv::drive
