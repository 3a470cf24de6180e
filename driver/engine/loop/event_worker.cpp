#include "engine/loop/event_worker.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "engine/loop/event_client.hpp"
#include "engine/loop/event_loop.hpp"
#include "engine/loop/uring_transport.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"

namespace kv::drive {
namespace loop {
namespace {

constexpr int64_t kTickNs = 5'000'000;        // timeouts, stop and abort are checked this often
constexpr int64_t kStopGraceNs = 50'000'000;  // Ctrl-C: replies still awaited this long

}  // namespace

Worker::Worker(const WorkerContext& context)
    : ctx(context),
      end_ns(phase_end_ns(context)),
      ready_(io),
      guard_(asio::make_work_guard(io)),
      waiter_(context.clock.waiter(io, context.plan.open_loop() ? &margin_ : nullptr)) {
  if (context.workload.io != IoMode::uring) return;
  // A link per connection and server (a pool's or a cluster's; a cluster's other nodes come later
  // and share the buffers).
  size_t sockets = 0;
  for (const auto& c : context.clients) sockets += std::max<size_t>(1, c->servers());
  uring_ = std::make_unique<UringLoop>(io, sockets);
  if (uring_->ok()) return;
  // Checked at the start (io_uring_refusal); a ring this thread could not make after all
  // (memory, a limit) leaves it on epoll, said once.
  LogLine(LogLevel::warn) << "worker " << context.index << ": --io uring: " << uring_->error()
                          << "; this thread uses epoll";
  uring_.reset();
}

Worker::~Worker() = default;

void Worker::submit_ring() { uring_->submit(); }

bool Worker::ring_pending() const { return uring_ && uring_->pending(); }

std::unique_ptr<Transport> Worker::make_transport(const EventClient& client, size_t server,
                                                  TransportEvents& events) {
  if (client.transports() != nullptr) return client.transports()->make(server, events, *waiter_);
  const SocketLoop loop{io, ready_, rbuf};
  if (client.tls_context() != nullptr)
    return std::make_unique<TlsTransport>(loop, events, *client.tls_context(),
                                          client.spec().servers[server].host);
  if (uring_) return std::make_unique<UringTransport>(loop, events, *uring_);
  return std::make_unique<TcpTransport>(loop, events);
}

void Worker::pool_server_lost(const EventClient& c, size_t server) {
  std::string note = "memcached pool server " + host_port(c.spec().servers[server]);
  if (!c.spec().eject_on_failure) {
    ctx.slot.add_note("pool_topology",
                      note + " down: its keys' requests fail at once while it backs off");
    return;
  }
  set_ejected(c, server, true);
  ctx.slot.add_note("pool_topology",
                    note + " ejected: its keys go to the next servers on the ring");
}

void Worker::pool_server_back(const EventClient& c, size_t server) {
  std::string note = "memcached pool server " + host_port(c.spec().servers[server]);
  if (!ejected(server)) {
    ctx.slot.add_note("pool_topology", note + " answers again");
    return;
  }
  set_ejected(c, server, false);
  ctx.slot.add_note("pool_topology", note + " back on the ring: its keys go to it again");
}

void Worker::set_ejected(const EventClient& c, size_t server, bool out) {
  if (ejected_.size() < c.servers()) ejected_.resize(c.servers(), false);
  ejected_[server] = out;
  const auto count = std::count(ejected_.begin(), ejected_.end(), true);
  live_ring_.reset();  // none while none is ejected (the client's ring) or every one is
  if (count > 0 && static_cast<size_t>(count) < ejected_.size())
    live_ring_ = std::make_unique<MemcachedRing>(c.spec(), ejected_);
}

size_t Worker::live_server_for(std::string_view key) const {
  return live_ring_ ? live_ring_->server_for(key) : SIZE_MAX;
}

Link* Worker::add_link(EventClient& client, size_t server) {
  links_.push_back(std::make_unique<Link>(*this, client, server, depth_));
  links_.back()->adopt(client.take_fd(server));
  return links_.back().get();
}

void Worker::refresh_slots(int64_t now) {
  if (refresh_.busy()) {
    auto done = refresh_.take();
    if (done && done->ok()) {
      std::array<int, st::kClusterSlots> before{};
      for (int slot = 0; slot < st::kClusterSlots; ++slot)
        before[static_cast<size_t>(slot)] = router->map().node_of_slot(slot);
      router->replace(done->value());
      note_map_change(before);
    }
    return;  // a failed read: tried again after the interval (the router still wants one)
  }
  if (!router->refresh_due(now)) return;
  const auto& client = (*ctx.clients[0]);
  refresh_.start(router->nodes(), client.spec(), client.tls_context(), client.options().timeout_us);
}

// What a refresh changed, as runs of slots that went from one node to another: a failover's
// promoted replica taking its master's slots, said once per phase (PhaseSeconds).
void Worker::note_map_change(const std::array<int, st::kClusterSlots>& before) {
  const auto& nodes = router->nodes();
  const auto name = [&](int node) {
    if (node < 0 || static_cast<size_t>(node) >= nodes.size()) return std::string("no node");
    return host_port(nodes[static_cast<size_t>(node)]);
  };
  std::string changes;
  int runs = 0;
  for (int slot = 0; slot < st::kClusterSlots;) {
    const int from = before[static_cast<size_t>(slot)];
    const int to = router->map().node_of_slot(slot);
    int next = slot + 1;  // the first slot past the run
    while (next < st::kClusterSlots && before[static_cast<size_t>(next)] == from &&
           router->map().node_of_slot(next) == to)
      ++next;
    if (from != to && to >= 0) awaiting_answer_.insert(name(to));
    if (from != to && ++runs <= 8) {  // appended piece by piece (GCC 12 -O3 -Wrestrict)
      if (!changes.empty()) changes += "; ";
      changes += "slots ";
      changes += std::to_string(slot);
      if (next - 1 > slot) {
        changes += '-';
        changes += std::to_string(next - 1);
      }
      changes += " from ";
      changes += name(from);
      changes += " to ";
      changes += name(to);
    }
    slot = next;
  }
  if (runs == 0) return;
  if (runs > 8) {
    changes += "; and ";
    changes += std::to_string(runs - 8);
    changes += " more ranges";
  }
  std::string note = "the cluster's slot map changed: ";
  note += changes;
  ctx.slot.add_note("cluster_topology", std::move(note));
}

void Worker::note_answer_slow(const HostPort& node) {
  const auto it = awaiting_answer_.find(host_port(node));
  if (it == awaiting_answer_.end()) return;
  std::string note = "first answer from ";
  note += *it;
  note += ", a new owner of slots in the cluster's slot map";
  ctx.slot.add_note("cluster_topology", std::move(note));
  awaiting_answer_.erase(it);
}

void Worker::start_users() {
  const size_t n = ctx.clients.size();
  depth_ = static_cast<size_t>(ctx.workload.pipeline);
  if (n > 0) late_ns = std::max(kEndGraceNs, (*ctx.clients[0]).options().timeout_us * 1000);
  for (size_t c = 0; c < n; ++c) {
    auto& client = (*ctx.clients[c]);
    if (c == 0 && client.slot_map())
      router = std::make_unique<st::ClusterRouter>(*client.slot_map());
    // Each connection is a stream of its own among every connection of the phase.
    users_.push_back(std::make_unique<User>(*this, ctx, client, ctx.index * n + c, ctx.count * n));
    users_.back()->local = c;
    for (size_t s = 0; s < client.servers(); ++s)
      users_.back()->links.push_back(add_link(client, s));
  }
  unfinished = users_.size();
  if (ctx.plan.kind != PhaseKind::trace || n == 0) return;
  try {
    feed = std::make_unique<TraceFeed>(ctx.workload.trace, ctx.index * n, n, ctx.count * n,
                                       ctx.plan.requests,
                                       ctx.clients[0]->spec().protocol == Protocol::redis);
  } catch (const TraceError& e) {  // gone since it was scanned: nothing is sent
    ctx.slot.add_note(kTraceErrorNote, e.what());
    for (auto& u : users_) u->finish();
  }
}

void Worker::wake_due(int64_t now) {
  while (!heap_.empty() && heap_.top().first <= now) {
    auto [at, u] = heap_.top();
    heap_.pop();
    if (!u->in_heap || u->heap_at != at) continue;  // superseded
    u->in_heap = false;
    u->refill(now);
  }
  flush_dirty();
}

void Worker::tick(int64_t now) {
  // The watched links only, by index: a check that fails requests may watch more links (a
  // redirect to a new node, a reconnect); one with nothing left to check leaves the list.
  for (size_t i = 0; i < watched_.size();) {
    Link* l = watched_[i];
    l->check(now);
    if (l->needs_check()) {
      ++i;
      continue;
    }
    l->watched_ = false;
    watched_[i] = watched_.back();
    watched_.pop_back();
  }
  if (router) refresh_slots(now);
  if (stopping(now)) {
    for (auto& u : users_) {
      if (!u->has_held) u->drop_due(now);
    }
  }
  flush_dirty();
}

void Worker::hand_back(bool interrupted) {
  if (feed && !feed->error().empty()) ctx.slot.add_note(kTraceErrorNote, feed->error());
  for (auto& l : links_) {
    if (interrupted)
      l->interrupt();
    else
      l->release();
  }
  if (uring_ && uring_->starved_total() > 0)
    LogLine(LogLevel::debug) << "worker " << ctx.index << ": " << uring_->starved_total()
                             << " receives waited for a free buffer (all " << uring_->buffers()
                             << " held by replies not yet read)";
  if (ctx.workload.wire_start_kernel) {
    const bool none = kernel_sent == 0 && call_sent > 0;
    LogLine(none ? LogLevel::warn : LogLevel::debug)
        << "worker " << ctx.index << ": the wire of " << kernel_sent
        << " requests began at the kernel's transmit stamp, " << call_sent
        << " at the send call (no stamp came" << (none ? ": TLS, or the kernel refused)" : ")");
  }
}

void Worker::run() {
  if (ctx.plan.open_loop()) prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);  // wake on time (pacer.hpp)
  spin_ = SpinBudget(ctx.workload.spin_budget);
  step_ns_ = ctx.workload.pace_granularity_us * 1000;
  start_users();
  int64_t now = this->now();
  for (auto& u : users_) u->refill(now);
  flush_dirty();
  // The timeout check's next time: every kTickNs, or with --pace-granularity above that at each
  // step's end, where the step's sends wake the thread anyway (a 5 ms tick would send what is
  // due every 5 ms, whatever the step).
  const auto tick_after = [this](int64_t t) {
    return step_ns_ > kTickNs ? (t / step_ns_ + 1) * step_ns_ : t + kTickNs;
  };
  int64_t next_tick = tick_after(now);
  bool interrupted = false;
  int64_t stopped_at = 0;
  for (;;) {
    now = this->now();
    if (ctx.stop.load(std::memory_order_relaxed)) {
      // Ctrl-C: nothing new is sent; what is in flight has kStopGraceNs to be answered, then
      // is given up (interrupted, counted abandoned).
      if (stopped_at == 0) {
        stopped_at = now;
        for (auto& u : users_) u->finish();
      }
      if (busy == 0 || now - stopped_at >= kStopGraceNs) {
        interrupted = true;
        break;
      }
    }
    wake_due(now);
    if (now >= next_tick) {
      next_tick = tick_after(now);
      tick(now);
    }
    if (unfinished == 0 && busy == 0 && (!waits_for_end || now >= end_ns || should_stop(ctx)))
      break;
    if (ring_pending()) {  // completions came during the pass: handled before any sleep
      uring_->reap();
      flush_dirty();
      continue;
    }
    int64_t wake = next_tick;
    if (!heap_.empty()) {
      // --pace-granularity: the next send time rounded up to the step's end, where every
      // request due in the step leaves in one wake-up (sooner if the thread is up anyway).
      int64_t due = heap_.top().first;
      if (step_ns_ > 0 && due > 0) due = (due - 1) / step_ns_ * step_ns_ + step_ns_;
      const int64_t margin = spin_.margin_ns(now, margin_.margin_ns());
      if (due - margin <= now) {
        // Close to a send time: spin (serving whatever I/O is ready) rather than sleep past it,
        // as long as the spin budget lasts.
        // Measured from here: the pass's own work (its sends, a tick) before it is not spin.
        const int64_t spin_from = this->now();
        if (waiter_->spin(due) == 0) {
          const int64_t spun = this->now() - spin_from;
          ctx.slot.add_spin(static_cast<uint64_t>(spun));
          spin_.spent(spun);
        }
        flush_dirty();
        continue;
      }
      wake = std::min(wake, due - margin);
    }
    if (waits_for_end && unfinished == 0 && busy == 0) wake = std::min(wake, end_ns);
    if (stopped_at != 0) wake = std::min(wake, stopped_at + kStopGraceNs);
    waiter_->wait(wake);
    flush_dirty();
  }
  hand_back(interrupted);
}

}  // namespace loop

void run_event_worker(const WorkerContext& ctx) {
  loop::Worker w(ctx);
  w.run();
}

}  // namespace kv::drive
