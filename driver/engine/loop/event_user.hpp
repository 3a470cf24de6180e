// One connection of the event engine (loop/event_worker.hpp) in the sense: an
// independent user of the store, with its own request stream (RequestPicker), its own in-flight
// window (depth = --pipeline) and, in rate mode, its own open-loop schedule. It sends through
// the Links (loop/event_link.hpp) of its EventClient, one per server, and is woken by its
// Worker (loop/event_loop.hpp) when a send falls due, a reply arrives or a connect ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/request_stream.hpp"
#include "engine/worker.hpp"

namespace kv::drive {
class EventClient;
}

namespace kv::drive::loop {

class Worker;
class Link;

// A connection whose server is down: one error per this long.
inline constexpr int64_t kFailPauseNs = 10'000'000;
// A Redis Cluster request redirected (MOVED / ASK) this often fails (as redis-cli's limit).
inline constexpr uint8_t kMaxRedirects = 5;

struct User {
  User(Worker& w, const WorkerContext& ctx, EventClient& c, uint64_t index, uint64_t count)
      : worker(w),
        client(c),
        picker(ctx, index, count),
        schedule(ctx, index, count),
        share(stream_share(ctx, index, count)),
        keys(ctx.workload.key_prefix) {}

  // Sends what is due while the window has room; schedules a wake-up for what is not due yet.
  void refill(int64_t now);
  // The reply to one of its requests arrived (or it failed): frees its slot.
  void done(int64_t now);
  void finish();
  // Its held request (picked while its connection was connecting) leaves now, or fails.
  void send_held(int64_t now);
  void fail_held(int64_t now);
  // A Redis Cluster: the link to the router's node `node` (a key's master, or where a redirect
  // points), made when this connection has none to it yet.
  Link* link_to_node(int node);
  // A reply was MOVED / ASK (`asking`) to `node`: the request goes there (after ASKING), still
  // in flight, its times kept (latency from its first queueing); `redirects` so far.
  void redirect(const Pending& p, int node, bool asking, uint8_t redirects, int64_t now);

  Worker& worker;
  EventClient& client;
  std::vector<Link*> links;       // one per server of the target
  std::vector<Link*> node_links;  // a Redis Cluster: by router node index (null: not looked up)
  RequestPicker picker;
  Schedule schedule;
  uint64_t share;
  KeyFormatter keys;
  uint64_t next = 0;  // requests picked so far
  size_t inflight = 0;
  bool finished = false;
  bool has_held = false;
  Pending held{};
  Link* held_link = nullptr;
  int64_t pause_until = 0;
  bool in_heap = false;
  int64_t heap_at = 0;
};

}  // namespace kv::drive::loop
