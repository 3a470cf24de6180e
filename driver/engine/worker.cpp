#include "engine/worker.hpp"

#include <algorithm>
#include <vector>

#include "engine/pacer.hpp"
#include "kvbench/clock.hpp"
#include "workload/key_chooser.hpp"

namespace kv::drive {
namespace {

constexpr int64_t kLateNs = 1'000'000;  // a send more than 1 ms behind schedule is late

// Decides the op and key of request i of this worker.
class RequestPicker {
 public:
  explicit RequestPicker(const WorkerContext& ctx)
      : w_(ctx.workload),
        kind_(ctx.plan.kind),
        key_begin_(w_.keys * ctx.index / ctx.count),
        key_end_(w_.keys * (ctx.index + 1) / ctx.count),
        cycle_(w_.ratio_sets + w_.ratio_gets),
        chooser_(w_.pattern, w_.keys, key_begin_, key_end_, w_.hit_rate,
                 w_.seed * 7919 + ctx.index) {}

  // False when a load phase has set all of this worker's keys.
  bool pick(uint64_t i, bool* is_set, uint64_t* key) {
    if (kind_ == PhaseKind::load) {
      *is_set = true;
      *key = key_begin_ + i;
      return *key < key_end_;
    }
    *is_set = kind_ == PhaseKind::mixed && (i % cycle_) < w_.ratio_sets;
    *key = *is_set ? chooser_.next_set() : chooser_.next_get();
    return true;
  }

 private:
  const WorkloadSpec& w_;
  PhaseKind kind_;
  uint64_t key_begin_, key_end_;
  uint32_t cycle_;
  KeyChooser chooser_;
};

// What a worker needs to finish a request after its reply arrived.
struct Pending {
  uint64_t key;
  uint64_t bytes_out;
  int64_t queued_ns;    // when it was handed to the client: where its latency starts
  int64_t intended_ns;  // rate mode: its send time on the schedule; else 0
  bool is_set;
};

// Latency runs from the moment the request was queued for sending (its intended send time in
// rate mode) to its reply, in every mode: pipelined requests count the time their batch waited
// to be flushed and the replies ahead of theirs, so --pipeline 16 compares with --pipeline 1.
void record_reply(const WorkerContext& ctx, const Pending& p, OpStatus st, std::string_view value,
                  int64_t done_ns) {
  if (st == OpStatus::interrupted) return;  // given up at Ctrl-C: not a completed request
  RequestRecord r{};
  r.status = st;
  r.bytes_out = p.bytes_out;
  if (!p.is_set && st == OpStatus::hit) {
    r.bytes_in = value.size();
    if (ctx.workload.verify)
      r.wrong = value != ctx.values.value_for(p.key, ctx.workload.values.size_for(p.key));
  }
  r.sent_latency_ns = static_cast<uint64_t>(done_ns - p.queued_ns);
  if (p.intended_ns != 0) {
    const int64_t slip = std::max<int64_t>(p.queued_ns - p.intended_ns, 0);
    r.slip_ns = static_cast<uint64_t>(slip);
    r.latency_ns = static_cast<uint64_t>(done_ns - p.intended_ns);
    r.late = slip > kLateNs;
  } else {
    r.latency_ns = r.sent_latency_ns;
  }
  ctx.slot.record(p.is_set ? OpType::set : OpType::get, r);
}

bool should_stop(const WorkerContext& ctx) {
  return ctx.stop.load(std::memory_order_relaxed) || ctx.abort.load(std::memory_order_relaxed);
}

// This worker's number of requests. Load phases: exactly its key range. Rate mode: request g of
// the phase (over every worker of every process) is due at g / rate and worker w sends
// g = w, w + count, ..., so a phase with fewer requests than workers still keeps the rate.
uint64_t my_share(const WorkerContext& ctx) {
  const uint64_t total = ctx.plan.requests;
  if (total == 0) return UINT64_MAX;  // the phase ends by duration
  if (ctx.plan.rate > 0 && ctx.plan.kind != PhaseKind::load)
    return ctx.index < total ? (total - ctx.index - 1) / ctx.count + 1 : 0;
  return total * (ctx.index + 1) / ctx.count - total * ctx.index / ctx.count;
}

int64_t phase_end_ns(const WorkerContext& ctx) {
  return ctx.plan.duration_us > 0 ? ctx.start_ns + ctx.plan.duration_us * 1000 : INT64_MAX;
}

// Rate mode: this worker's send times, one period (count / rate) apart, offset by its index
// within the period so that the workers do not send in lockstep; 0 outside rate mode.
class Schedule {
 public:
  explicit Schedule(const WorkerContext& ctx)
      : start_ns_(ctx.start_ns),
        period_ns_(ctx.plan.rate > 0 ? 1e9 * static_cast<double>(ctx.count) / ctx.plan.rate : 0),
        offset_ns_(period_ns_ * static_cast<double>(ctx.index) / static_cast<double>(ctx.count)) {}
  bool on() const noexcept { return period_ns_ > 0; }
  int64_t at(uint64_t i) const noexcept {
    return on() ? start_ns_ + static_cast<int64_t>(offset_ns_ + static_cast<double>(i) * period_ns_)
                : 0;
  }

 private:
  int64_t start_ns_;
  double period_ns_, offset_ns_;
};

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
  const uint64_t my_requests = my_share(ctx);
  const int64_t end_ns = phase_end_ns(ctx);
  Pacer pacer(ctx.stop, ctx.abort);
  RequestPicker picker(ctx);
  KeyFormatter keys(w.key_prefix);

  for (uint64_t i = 0; i < my_requests && !should_stop(ctx); ++i) {
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
  const uint64_t my_requests = my_share(ctx);
  const int64_t end_ns = phase_end_ns(ctx);
  Pacer pacer(ctx.stop, ctx.abort);
  RequestPicker picker(ctx);
  KeyFormatter keys(w.key_prefix);
  std::vector<Pending> pending(conns * depth);
  std::vector<size_t> queued(conns);

  uint64_t i = 0;
  bool more = true;
  while (more && i < my_requests && !should_stop(ctx)) {
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
  if (ctx.clients.size() == 1 && ctx.workload.pipeline == 1) {
    run_blocking(ctx);
  } else {
    run_pipelined(ctx);
  }
}

}  // namespace kv::drive
