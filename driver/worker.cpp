#include "worker.hpp"

#include <time.h>

#include <vector>

#include "key_chooser.hpp"
#include "kvbench/clock.hpp"

namespace kv::drive {
namespace {

void sleep_until_ns(int64_t steady_deadline_ns) {
  timespec ts{static_cast<time_t>(steady_deadline_ns / 1'000'000'000),
              static_cast<long>(steady_deadline_ns % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

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
        chooser_(w_.pattern, w_.keys, key_begin_, key_end_, w_.hit_rate, w_.seed * 7919 + ctx.index) {}

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
  bool is_set;
};

void record_reply(const WorkerContext& ctx, const Pending& p, OpStatus st, std::string_view value,
                  int64_t sent_ns, int64_t done_ns, int64_t intended_ns) {
  if (st == OpStatus::interrupted) return;  // given up at Ctrl-C: not a completed request
  RequestRecord r{};
  r.status = st;
  r.bytes_out = p.bytes_out;
  if (!p.is_set && st == OpStatus::hit) {
    r.bytes_in = value.size();
    if (ctx.workload.verify)
      r.wrong = value != ctx.values.value_for(p.key, ctx.workload.values.size_for(p.key));
  }
  r.sent_latency_ns = static_cast<uint64_t>(done_ns - sent_ns);
  r.latency_ns = intended_ns ? static_cast<uint64_t>(done_ns - intended_ns) : r.sent_latency_ns;
  r.late = intended_ns && sent_ns - intended_ns > kLateNs;
  ctx.slot.record(p.is_set ? OpType::set : OpType::get, r);
}

bool should_stop(const WorkerContext& ctx) {
  return ctx.stop.load(std::memory_order_relaxed) || ctx.abort.load(std::memory_order_relaxed);
}

uint64_t share_of(uint64_t total, const WorkerContext& ctx) {
  if (total == 0) return UINT64_MAX;  // the phase ends by duration
  return total * (ctx.index + 1) / ctx.count - total * ctx.index / ctx.count;
}

// One connection, one request at a time (optionally on a fixed schedule).
void run_blocking(const WorkerContext& ctx) {
  const PhasePlan& plan = ctx.plan;
  const WorkloadSpec& w = ctx.workload;
  StoreClient& client = *ctx.clients.front();
  const bool rate_mode = plan.rate > 0;
  const uint64_t my_requests = share_of(plan.requests, ctx);
  const int64_t end_ns = plan.duration_us > 0 ? ctx.start_ns + plan.duration_us * 1000 : INT64_MAX;
  const double period_ns = rate_mode ? 1e9 * static_cast<double>(ctx.count) / plan.rate : 0;
  // Spread the workers' schedules over one period so they do not send in lockstep.
  const double offset_ns = period_ns * static_cast<double>(ctx.index) / static_cast<double>(ctx.count);
  RequestPicker picker(ctx);
  KeyFormatter keys(w.key_prefix);

  for (uint64_t i = 0; i < my_requests && !should_stop(ctx); ++i) {
    int64_t intended_ns = 0;
    if (rate_mode) {
      intended_ns = ctx.start_ns + static_cast<int64_t>(offset_ns + static_cast<double>(i) * period_ns);
      if (intended_ns >= end_ns) break;
      if (steady_ns() < intended_ns) sleep_until_ns(intended_ns);
    }
    Pending p{};
    if (!picker.pick(i, &p.is_set, &p.key)) break;
    std::string_view key = keys.format(p.key);
    std::string_view value;
    OpStatus st;
    int64_t t0 = steady_ns();
    if (p.is_set) {
      value = ctx.values.value_for(p.key, w.values.size_for(p.key));
      p.bytes_out = key.size() + value.size();
      st = client.set(key, value, w.ttl_s);
    } else {
      p.bytes_out = key.size();
      st = client.get(key, &value);
    }
    int64_t t1 = steady_ns();
    record_reply(ctx, p, st, value, t0, t1, intended_ns);
    if (!rate_mode && t1 >= end_ns) break;
  }
}

// Several connections and/or pipelining: each round queues `pipeline` requests on every
// connection, flushes them all, lets each finish sending (memcached: the multi-get after the
// sets' replies), then reads every reply; a request's latency runs from its connection's flush
// to its reply.
void run_pipelined(const WorkerContext& ctx) {
  const WorkloadSpec& w = ctx.workload;
  const size_t conns = ctx.clients.size();
  const auto depth = static_cast<size_t>(w.pipeline);
  const uint64_t my_requests = share_of(ctx.plan.requests, ctx);
  const int64_t end_ns =
      ctx.plan.duration_us > 0 ? ctx.start_ns + ctx.plan.duration_us * 1000 : INT64_MAX;
  RequestPicker picker(ctx);
  KeyFormatter keys(w.key_prefix);
  std::vector<Pending> pending(conns * depth);
  std::vector<size_t> queued(conns);
  std::vector<int64_t> sent_ns(conns);

  uint64_t i = 0;
  bool more = true;
  while (more && i < my_requests && !should_stop(ctx)) {
    for (size_t c = 0; c < conns; ++c) {
      queued[c] = 0;
      for (size_t j = 0; j < depth && more && i < my_requests; ++j, ++i) {
        Pending& p = pending[c * depth + j];
        if (!picker.pick(i, &p.is_set, &p.key)) {
          more = false;
          break;
        }
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
    }
    for (size_t c = 0; c < conns; ++c) {
      if (queued[c] == 0) continue;
      ctx.clients[c]->flush();
      sent_ns[c] = steady_ns();
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
        record_reply(ctx, pending[c * depth + j], st, value, sent_ns[c], now, 0);
      }
    }
    if (now >= end_ns) break;
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
