#include "engine/worker.hpp"

#include <algorithm>
#include <vector>

#include "engine/loop/event_client.hpp"
#include "engine/loop/event_worker.hpp"
#include "engine/pacer.hpp"
#include "engine/request_stream.hpp"
#include "kvbench/clock.hpp"

namespace kv::drive {
namespace {

// Rate mode: waits for send time intended_ns (sleep, then spin: see Pacer) and books the spin.
// False when the phase ends (duration, stop, abort) first: the worker then returns at the
// phase's end, never before it (the phase's seconds are wall time) and never after it.
bool wait_for_send(const WorkerContext& ctx, Pacer& pacer, int64_t intended_ns, int64_t end_ns) {
  uint64_t spin_ns = 0;
  bool reached = pacer.wait_until(intended_ns, end_ns, &spin_ns);
  if (spin_ns > 0) ctx.slot.add_spin(spin_ns);
  return reached;
}

// One connection, one request at a time (optionally on a fixed schedule).
void run_blocking(const WorkerContext& ctx) {
  const WorkloadSpec& w = ctx.workload;
  StoreClient& client = *ctx.clients.front();
  const Schedule schedule(ctx);
  const uint64_t my_requests = stream_share(ctx, ctx.index, ctx.count);
  const int64_t end_ns = phase_end_ns(ctx);
  Pacer pacer(ctx.stop, ctx.abort);
  RequestPicker picker(ctx);
  KeyFormatter keys(w.key_prefix);

  for (uint64_t i = 0; i < my_requests && !stop_sending(ctx, end_ns, steady_ns()); ++i) {
    Pending p{};
    p.intended_ns = schedule.at(i);
    if (schedule.on() && !wait_for_send(ctx, pacer, p.intended_ns, end_ns)) break;
    if (!picker.pick(i, &p.is_set, &p.key)) break;
    std::string_view key = keys.format(p.key);
    std::string_view value;
    OpStatus st;
    if (p.is_set) {
      value = ctx.values.value_for(p.key, w.values.size_for(p.key));
      p.bytes_out = key.size() + value.size();
      p.queued_ns = steady_ns();
      st = client.set(key, value, w.ttl_s);
    } else {
      p.bytes_out = key.size();
      p.queued_ns = steady_ns();
      st = client.get(key, &value);
    }
    int64_t done = steady_ns();
    record_reply(ctx, p, st, value, done);
    if (!schedule.on() && done >= end_ns) break;
  }
}

// Several connections and/or pipelining: each round queues up to `pipeline` requests on every
// connection (request k of the round on connection k % connections), flushes them all, lets each
// finish sending (memcached: the multi-get after the sets' replies), then reads every reply.
// In rate mode a round starts at its first request's send time and takes every request already
// due, so the rate holds and a round is small when the store keeps up.
void run_pipelined(const WorkerContext& ctx) {
  const WorkloadSpec& w = ctx.workload;
  const size_t conns = ctx.clients.size();
  const auto depth = static_cast<size_t>(w.pipeline);
  const Schedule schedule(ctx);
  const uint64_t my_requests = stream_share(ctx, ctx.index, ctx.count);
  const int64_t end_ns = phase_end_ns(ctx);
  Pacer pacer(ctx.stop, ctx.abort);
  RequestPicker picker(ctx);
  KeyFormatter keys(w.key_prefix);
  std::vector<Pending> pending(conns * depth);
  std::vector<size_t> queued(conns);

  uint64_t i = 0;
  bool more = true;
  while (more && i < my_requests && !stop_sending(ctx, end_ns, steady_ns())) {
    if (schedule.on() && !wait_for_send(ctx, pacer, schedule.at(i), end_ns)) break;
    std::fill(queued.begin(), queued.end(), 0);
    for (size_t k = 0; k < conns * depth && i < my_requests; ++k, ++i) {
      const int64_t now = steady_ns();
      const int64_t intended = schedule.at(i);
      if (k > 0 && (intended > now || intended >= end_ns)) break;  // rate mode: not due yet
      const size_t c = k % conns;
      Pending& p = pending[c * depth + queued[c]];
      if (!picker.pick(i, &p.is_set, &p.key)) {
        more = false;
        break;
      }
      p.intended_ns = intended;
      p.queued_ns = now;
      std::string_view key = keys.format(p.key);
      if (p.is_set) {
        std::string_view value = ctx.values.value_for(p.key, w.values.size_for(p.key));
        p.bytes_out = key.size() + value.size();
        ctx.clients[c]->send_set(key, value, w.ttl_s);
      } else {
        p.bytes_out = key.size();
        ctx.clients[c]->send_get(key);
      }
      ++queued[c];
    }
    for (size_t c = 0; c < conns; ++c) {
      if (queued[c] != 0) ctx.clients[c]->flush();
    }
    for (size_t c = 0; c < conns; ++c) {
      if (queued[c] != 0) ctx.clients[c]->finish_send();
    }
    int64_t now = 0;
    for (size_t c = 0; c < conns; ++c) {
      for (size_t j = 0; j < queued[c]; ++j) {
        std::string_view value;
        OpStatus st = ctx.clients[c]->receive(&value);
        now = steady_ns();
        record_reply(ctx, pending[c * depth + j], st, value, now);
      }
    }
    if (!schedule.on() && now >= end_ns) break;
  }
}

}  // namespace

void run_worker(const WorkerContext& ctx) {
  // #16: connections made for the event-loop engine (--engine events) are driven by it.
  if (dynamic_cast<const EventClient*>(ctx.clients.front().get()) != nullptr) {
    run_event_worker(ctx);
    return;
  }
  if (ctx.clients.size() == 1 && ctx.workload.pipeline == 1) {
    run_blocking(ctx);
  } else {
    run_pipelined(ctx);
  }
}

}  // namespace kv::drive
