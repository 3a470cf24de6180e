// One connection of the event engine (loop/event_worker.hpp) in the sense: an
// independent user of the store, with its own request stream (RequestPicker), its own in-flight
// window (depth = --pipeline) and, in rate mode, its own open-loop schedule. It sends through
// the Links (loop/event_link.hpp) of its EventClient, one per server, and is woken by its
// Worker (loop/event_loop.hpp) when a send falls due, a reply arrives or a connect ends.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "engine/grow_ring.hpp"
#include "engine/request_stream.hpp"
#include "engine/worker.hpp"

namespace kv::drive {
class EventClient;
}

namespace kv::drive::loop {

class Worker;
class Link;

// A replay at fast timing whose stream has nothing read while the others' queues are full looks
// again this much later.
inline constexpr int64_t kTraceRetryNs = 200'000;
// --mix cas: the gets uniques a connection keeps (at least; --pipeline when larger).
inline constexpr size_t kCasUniques = 32;
// A connection whose server is down: one error per this long.
inline constexpr int64_t kFailPauseNs = 10'000'000;
// An mget on a memcached pool draws at most this many keys per key it carries, looking for
// keys of its first key's server.
inline constexpr uint32_t kMultiKeyDraws = 64;
// A Redis Cluster request redirected (MOVED / ASK) this often fails (as redis-cli's limit).
inline constexpr uint8_t kMaxRedirects = 5;

struct User {
  User(Worker& w, const WorkerContext& ctx, EventClient& c, uint64_t index, uint64_t count)
      : worker(w),
        client(c),
        picker(ctx, index, count),
        schedule(ctx, index, count),
        open_loop(ctx.plan.open_loop()),
        share(stream_share(ctx, index, count)),
        keys(ctx.workload.key_prefix, ctx.workload.key_sizes),
        backfills(ctx.workload.cache_aside ? static_cast<size_t>(ctx.workload.pipeline) : 0),
        uniques(ctx.workload.phase_sends(PhaseKind::mixed, OpType::cas)
                    ? std::max<size_t>(kCasUniques, static_cast<size_t>(ctx.workload.pipeline))
                    : 0) {
    if (ctx.workload.multi_key_get > 0) {
      multi_keys.reserve(ctx.workload.multi_key_get * (kMaxKeySize + 1));
      multi_values.reserve(ctx.workload.multi_key_get);
    }
  }

  // Sends what is due while the window has room; schedules a wake-up for what is not due yet.
  void refill(int64_t now);
  // refill's next request: from the stream's picker and schedule, or from the worker's trace
  // feed; false when none leaves now (finished, dropped, paused, not due: a wake-up is set).
  bool pick_scheduled(int64_t& now, Pending& p);
  bool pick_traced(int64_t& now, Pending& p);
  // No request leaves now: the phase stopped sending (what was due is dropped) or the user
  // pauses after a failure (a wake-up is set).
  bool held_back(int64_t now);
  // The next request may leave: open loop, at `intended` (wait_until); closed loop, before the
  // phase's end (after it the user finishes).
  bool due(int64_t intended, int64_t& now);
  // An open-loop send time: true when it is due by now (`now` read again when not yet); false
  // when it lies past the phase's end (finished) or ahead (a wake-up set).
  bool wait_until(int64_t intended, int64_t& now);
  // p's times: intended (0: closed loop), queued, and the part of the wait the window was full.
  void queue(int64_t intended, int64_t now, Pending& p);
  // The reply to one of its requests arrived (or it failed): frees its slot. `freed_at`: when
  // the slot really came free (the reply's arrival, when stamped; else now).
  void done(int64_t now, int64_t freed_at = 0);
  void finish();
  // --cache-aside: a get of `key` missed; its backfill (a set of the key) leaves before the
  // next picked request. Called before done() frees the get's slot.
  void backfill(uint64_t key);
  // --mix cas: a gets of `key` returned `unique`; the next cas of this connection takes the
  // newest one (the key and its unique: a client's gets, then its cas), and with none sends
  // kNoCasUnique.
  void remember_cas(uint64_t key, uint64_t unique);
  void take_cas(Pending& p);
  // The phase stopped sending (its end's late window passed, or an abort): finishes, and in
  // rate mode counts the requests that were due by then (before the phase's end) and never
  // left as dropped, per op (StatsSlot::add_dropped). Not at Ctrl-C.
  void drop_due(int64_t now);
  // A memcached pool's request whose server's link is not up: while the server is healthy it
  // waits in the window for the reconnect (Link::park); while it backs off the request fails at
  // once, without I/O, and a due probe connect starts. Only when none of its links is up does
  // the user pause (kFailPauseNs), so the live members keep their pace.
  void to_pool(Link& l, const Pending& p);
  // Starts a probe connect to l's server when one is due (its backoff step is over and no
  // probe is under way).
  void probe(Link& l, int64_t now);
  // The server a key goes to: its own, or with ?on-failure=eject and its own ejected, the next
  // live one on the ring (a probe of its own starting when due).
  size_t place(std::string_view key, int64_t now);
  bool any_link_up() const;
  // Its held request (picked while its connection was connecting) leaves now, or fails.
  void send_held(int64_t now);
  void fail_held(int64_t now);
  // What a request of `p` names: its key, or an mget's (an mset's) keys separated by spaces (its
  // first, then more as the key pattern picks them; on a memcached pool only those of its first
  // key's server), an mset's values in multi_values. Sets an mget's or mset's key_count and
  // bytes_out. Valid until the next call.
  std::string_view request_keys(Pending& p);
  // refill's last steps: `p`'s key and value, the link its key goes to, and the send (or the
  // pool's fast failure); false: refill stops there (held while a link connects).
  bool send_picked(Pending& p);
  // Sends `p` on `l`; fails it at once when `l`'s server is down and not to
  // be retried yet; else holds it while `l` connects (false: refill stops there).
  bool dispatch(Link& l, const Pending& p, std::string_view key, std::string_view value);
  void hold(Link& l, const Pending& p);
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
  bool open_loop;    // rate mode, or a replay at recorded timing
  size_t local = 0;  // its place among its worker's users (the trace feed's stream)
  uint64_t share;
  KeyFormatter keys;
  // --cache-aside: the keys of the gets that missed, to be set (at most --pipeline: one per
  // request in flight); allocated once.
  std::vector<uint64_t> backfills;
  size_t backfill_head = 0, backfill_count = 0;
  // --mix cas: the newest gets hits' keys and uniques (a ring, the oldest overwritten);
  // allocated once.
  struct CasUnique {
    uint64_t key, unique;
  };
  std::vector<CasUnique> uniques;
  size_t unique_head = 0, unique_count = 0;
  std::string multi_keys;  // --multi-key-get: request_keys' buffer, reserved once
  std::vector<std::string_view> multi_values;  // an mset's values (views of the ValueTable)
  uint64_t next = 0;                           // requests picked so far
  size_t inflight = 0;
  // Rate mode: the spans in which the --pipeline window was full (no request could leave until
  // a reply freed a slot: the store's time), for each request's Pending::queue_ns. A span opens
  // when a send fills the window and closes when a reply frees a slot (at its arrival, when
  // stamped). Spans that ended before the next request's intended time are dropped.
  struct FullSpan {
    int64_t start, end;
    int64_t cum_end;  // full time of every span up to this one's end
  };
  // Grows only for a backlog longer than any before (engine/grow_ring.hpp).
  GrowRing<FullSpan> full_spans;
  int64_t full_start = -1;  // the open span's start; -1: the window has room
  int64_t full_total = 0;   // full time of every closed span
  int64_t full_before = 0;  // full time of the spans dropped from the front
  // Full time between `intended` (not before any earlier call's) and now (the window has room).
  int64_t full_since(int64_t intended);
  void close_full(int64_t end);  // the window has room again from `end`: its span ends
  bool finished = false;
  bool has_held = false;
  Pending held{};
  Link* held_link = nullptr;
  int64_t pause_until = 0;
  bool in_heap = false;
  int64_t heap_at = 0;
};

}  // namespace kv::drive::loop
