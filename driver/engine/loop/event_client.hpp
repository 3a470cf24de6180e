// EventClient: one connection (or one pool, for memcached; one set of node connections, for a
// Redis Cluster) to a store, whose requests go through the event-loop engine
// (loop/event_worker.hpp), not through a client library. It owns one
// connected socket per server of its target (one for Redis, one per pool member for memcached)
// between phases; during a phase the worker thread's event loop adopts the sockets, drives them
// without blocking and hands back those still connected at the end. connect() connects every
// server (blocking, with the per-request timeout) and sends the handshake (Redis AUTH / SELECT,
// memcached version), so a store that refuses kvdrive is found before any traffic.
// Not thread-safe: used by one thread at a time (the run's thread, then one worker thread).
#pragma once

#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "engine/client_options.hpp"
#include "kvbench/result.hpp"
#include "store/memcached_ring.hpp"
#include "store/target_uri.hpp"

namespace kv::drive {
namespace loop {
class TransportFactory;
}
namespace store {
class TlsContext;
class TlsSession;
class SlotMap;
}  // namespace store

// A resolved server address, kept from the first connect for the loop's reconnects.
struct SocketAddress {
  sockaddr_storage addr{};
  socklen_t len = 0;
};

class EventClient final {
 public:
  // A TLS target's connections use `tls` (built from spec.tls when null; shared by the clients
  // of one target: connect_event_clients builds it once).
  // A Redis Cluster target (spec.cluster) needs `slots`: its servers become the map's masters.
  EventClient(TargetSpec spec, ClientOptions opts,
              std::shared_ptr<const store::TlsContext> tls = nullptr,
              std::shared_ptr<const store::SlotMap> slots = nullptr);
  ~EventClient();
  EventClient(const EventClient&) = delete;
  EventClient& operator=(const EventClient&) = delete;

  // Connects (and authenticates / selects the database). Error: why, naming the server.
  Result<void> connect();
  // The server's version as it reports it; empty if unknown.
  std::string server_version();
  // Follows Redis Cluster redirects (and counts them, StatsSlot::add_redirect).
  bool follows_redirects() const { return spec_.cluster; }
  // A memcached pool: its servers as HOST:PORT, in the URI's order (the per-server counts,
  // StatsSlot::add_pool); empty for any other target.
  std::vector<std::string> pool_servers() const;
  // A memcached pool whose servers are counted apart (pool_servers() not empty).
  bool is_pool() const noexcept {
    return spec_.protocol == Protocol::memcached && spec_.servers.size() > 1;
  }

  const TargetSpec& spec() const noexcept { return spec_; }
  const ClientOptions& options() const noexcept { return opts_; }
  size_t servers() const noexcept { return spec_.servers.size(); }
  // Which server (index into spec().servers) a key goes to: libmemcached's ketama for a
  // memcached pool, else 0.
  // libmemcached's ketama for a memcached pool, the key's hash slot's master for a Redis
  // Cluster (as CLUSTER SLOTS said when the clients were made), else 0.
  size_t server_for(std::string_view key) const;
  // The connected socket of server i, handed over (-1: none; the loop then reconnects).
  int take_fd(size_t i);
  // Hands a connected socket back (or -1); the client closes it when destroyed. Drops the TLS
  // session of the socket it replaces.
  void give_fd(size_t i, int fd);
  // A TLS target: the session over server i's socket, handed over with take_fd (null: none,
  // or plain TCP); given back after give_fd.
  std::unique_ptr<store::TlsSession> take_tls(size_t i);
  void give_tls(size_t i, std::unique_ptr<store::TlsSession> s);
  // The target's TLS context; null for plain TCP.
  const store::TlsContext* tls_context() const noexcept { return tls_ctx_.get(); }
  // Where server i was reached (len 0: never resolved).
  const SocketAddress& address(size_t i) const { return addresses_[i]; }
  // A Redis Cluster: the index of the server at `node`, added (not connected: the loop
  // connects it on first use; its address resolved now, len 0 if it cannot be) when it is not
  // one yet — a node that a MOVED / ASK or a slot refresh named.
  size_t server_index(const HostPort& node);
  // A Redis Cluster's slot map as CLUSTER SLOTS said when the clients were made; null else.
  const std::shared_ptr<const store::SlotMap>& slot_map() const noexcept { return slots_; }
  // The loop's links to this client's servers move their bytes through `f`'s transports rather
  // than sockets (a test's scripted store; connect() is then not called).
  void set_transports(std::shared_ptr<loop::TransportFactory> f) { transports_ = std::move(f); }
  loop::TransportFactory* transports() const noexcept { return transports_.get(); }
  // The loop gave up `n` requests at Ctrl-C after (part of) them were sent.
  void count_abandoned(uint64_t n) noexcept { abandoned_ += n; }
  // Requests given up at an interrupt after (part of) them had been sent: the store may have
  // counted them although kvdrive did not. Read once the worker has stopped.
  uint64_t abandoned() const noexcept { return abandoned_; }

 private:
  uint64_t abandoned_ = 0;
  TargetSpec spec_;
  ClientOptions opts_;
  std::unique_ptr<MemcachedRing> ring_;
  std::vector<int> fds_;
  std::shared_ptr<const store::TlsContext> tls_ctx_;
  std::vector<std::unique_ptr<store::TlsSession>> tls_;  // per server, beside fds_
  std::vector<SocketAddress> addresses_;
  std::shared_ptr<const store::SlotMap> slots_;         // a Redis Cluster's, shared by its clients
  std::shared_ptr<loop::TransportFactory> transports_;  // null: sockets
};

// Connects n EventClients to the target; throws std::runtime_error naming it if any cannot.
std::vector<std::unique_ptr<EventClient>> connect_event_clients(const TargetSpec& spec, size_t n,
                                                                const ClientOptions& opts);

// What a new connection to `spec` sends before any request: Redis AUTH and SELECT as needed
// (memcached: nothing). Appends the commands to out and returns how many replies they get.
size_t append_handshake(const TargetSpec& spec, std::string& out);

}  // namespace kv::drive
