// The event engine's worker (loop/event_worker.hpp): one io_context, the Users and Links of
// this thread's connections, the wake-up heap of rate-mode sends, the list of links with
// output to flush once the current handler is done, and the loop itself (run). Internal to
// engine/loop/; the entry point is run_event_worker.
#pragma once

#include <array>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/loop/event_link.hpp"
#include "engine/loop/event_user.hpp"
#include "engine/loop/socket_transport.hpp"
#include "engine/pacer.hpp"
#include "engine/request_stream.hpp"
#include "engine/trace_feed.hpp"
#include "engine/worker.hpp"
#include "store/cluster.hpp"
#include "store/cluster_topology.hpp"
#include "store/memcached_ring.hpp"

namespace kv::drive::loop {

class UringLoop;

class Worker {
 public:
  explicit Worker(const WorkerContext& context);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void run();
  void schedule_wake(User* u, int64_t at) {
    if (u->in_heap && u->heap_at <= at) return;
    u->in_heap = true;
    u->heap_at = at;
    heap_.emplace(at, u);
  }
  void dirty(Link* l) { dirty_.push_back(l); }
  void watch(Link* l) { watched_.push_back(l); }  // Link::watch
  // The monotonic clock (WorkerContext::clock): every time the loop, its users and links read.
  int64_t now() const { return ctx.clock.steady_ns(); }
  // No new request: Ctrl-C, or the phase is over (see stop_sending: in rate mode the requests
  // due before end_ns still go out when the collector's abort is the duration's end).
  bool stopping(int64_t now) const { return stop_sending(ctx, end_ns, now, late_ns); }

  const WorkerContext& ctx;
  const int64_t end_ns;
  // Rate mode: how long past end_ns requests due before it may still leave (the request
  // timeout); then the rest are dropped (User::drop_due).
  int64_t late_ns = kEndGraceNs;
  asio::io_context io{1};
  std::array<char, 16384> rbuf{};  // every socket's reads land here, then in its decoder
  size_t unfinished = 0;           // users not finished
  size_t busy = 0;                 // requests in flight or held, over every user
  // --wire-start kernel: answered requests whose wire began at the kernel's transmit stamp, and
  // those whose stamp did not come (their wire began at the send call)
  uint64_t kernel_sent = 0, call_sent = 0;
  bool waits_for_end = false;  // a rate-mode user's next send lies past the phase's end
  // A memcached pool: each server's health as this worker's links found it, so that a dead
  // member costs one probe connect per backoff step for the whole worker, while its share of
  // the requests fails at once (no I/O) and the live members keep their pace (User::to_pool).
  struct PoolServer {
    int64_t backoff_ns = 0;  // 0: it answered its last connect; else the wait after a failed one
    int64_t retry_at = 0;    // a probe may start then
    bool probing = false;    // a probe connect is under way
  };
  PoolServer& pool_server(size_t server) {
    if (pool_.size() <= server) pool_.resize(server + 1);
    return pool_[server];
  }
  // A memcached pool's server found dead (its first failed connect after it answered) or
  // answering again. With ?on-failure=eject the first takes it off this worker's ring (its keys
  // go to the next servers on it, as libmemcached's auto-eject) and the second puts it back;
  // each is noted (an event).
  void pool_server_lost(const EventClient& c, size_t server);
  void pool_server_back(const EventClient& c, size_t server);
  // ?on-failure=eject: whether `server` is off the ring, and where a key goes meanwhile (SIZE_MAX
  // when every server is).
  bool ejected(size_t server) const { return server < ejected_.size() && ejected_[server]; }
  size_t live_server_for(std::string_view key) const;
  // A replay (run --trace): this thread's reader of the trace; null otherwise.
  std::unique_ptr<TraceFeed> feed;
  // A Redis Cluster target: this thread's slot map and redirects (a copy of the map CLUSTER
  // SLOTS gave when the clients were made); null for other targets.
  std::unique_ptr<st::ClusterRouter> router;
  // A Redis Cluster: a request answered by `node`; the first answer from a node that a slot map
  // change gave slots (a failover's promoted replica) is noted, ending the failover's window.
  void note_answer(const HostPort& node) {
    if (!awaiting_answer_.empty()) note_answer_slow(node);
  }
  // A socket of its own to `server` of `client` (a node a redirect or a refresh named).
  Link* add_link(EventClient& client, size_t server);
  std::vector<PoolServer> pool_;
  std::vector<bool> ejected_;                 // ?on-failure=eject: by server
  std::unique_ptr<MemcachedRing> live_ring_;  // the ring of the servers not ejected

  // The transport of a link to `server` of `client`, telling `events` (loop/transport.hpp): TLS
  // or plain TCP through the worker's ready list.
  std::unique_ptr<Transport> make_transport(const EventClient& client, size_t server,
                                            TransportEvents& events);

 private:
  // run()'s steps: a User (and its Links) per client; the rate-mode users whose send time
  // came; every kTickNs the timeouts, the slot map and the drops past the end; at the end
  // every link's socket handed back (or, interrupted, shut down).
  void start_users();
  void wake_due(int64_t now);
  void tick(int64_t now);
  void hand_back(bool interrupted);
  void flush_dirty() {
    // By index, not a range: should a flush mark a link dirty, the vector may grow under it.
    // NOLINTNEXTLINE(modernize-loop-convert)
    for (size_t i = 0; i < dirty_.size(); ++i) dirty_[i]->flush();
    dirty_.clear();
    if (uring_) submit_ring();
  }
  // --io uring: what the pass queued on the ring leaves in one call.
  void submit_ring();
  // --io uring: completions waiting (reaped before the loop sleeps); false without a ring.
  bool ring_pending() const;
  // A Redis Cluster: starts a CLUSTER SLOTS read when the router wants one (rate-limited) and
  // applies the one that is over.
  void refresh_slots(int64_t now);
  void note_map_change(const std::array<int, st::kClusterSlots>& before);
  // ?on-failure=eject: marks `server` off (or back on) the ring and remakes live_ring_.
  void set_ejected(const EventClient& c, size_t server, bool out);
  void note_answer_slow(const HostPort& node);
  std::set<std::string> awaiting_answer_;  // HOST:PORT of nodes given slots, not answered yet

  ReadyList ready_;  // plain-TCP sockets are read through it (loop/socket_transport.hpp)
  asio::executor_work_guard<asio::io_context::executor_type> guard_;
  std::unique_ptr<LoopWaiter> waiter_;  // how the loop sleeps (WorkerContext::clock)
  std::vector<Link*> dirty_;
  // The links with a request in flight or a connect under way: what tick() checks for timeouts
  // (every link would cost 10,000 checks per tick at 10,000 connections).
  std::vector<Link*> watched_;
  std::vector<std::unique_ptr<Link>> links_;
  std::vector<std::unique_ptr<User>> users_;
  using Due = std::pair<int64_t, User*>;
  std::priority_queue<Due, std::vector<Due>, std::greater<>> heap_;
  SpinMargin margin_;
  SpinBudget spin_;
  int64_t step_ns_ = 0;  // --pace-granularity, ns (0: each send at its own time)
  st::SlotRefresh refresh_;
  size_t depth_ = 1;
  // --io uring: the worker's ring (null: epoll). Declared after links_: it goes first, waiting
  // for what the kernel still holds of their transports.
  std::unique_ptr<UringLoop> uring_;
};

}  // namespace kv::drive::loop
