// Per-operation counters and latency, recorded by one worker and handed to the collector once
// per second through a double buffer (the only shared state on the request path: one
// uncontended lock per request).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>

#include "kvbench/histogram.hpp"
#include "store/op_status.hpp"

namespace kv::drive {

enum class OpType : uint8_t { set = 0, get = 1 };
constexpr int kOpTypes = 2;
const char* op_name(OpType op);

// One completed request, as a worker measured it.
struct RequestRecord {
  OpStatus status;
  uint64_t latency_ns;       // from the intended send time in rate mode, else from the send
  uint64_t sent_latency_ns;  // from the actual send (equal to latency_ns outside rate mode)
  uint64_t bytes_out;
  uint64_t bytes_in;
  bool wrong;        // a get whose value differed from what was written
  bool late;         // rate mode: sent more than 1 ms behind its schedule
  uint64_t slip_ns;  // rate mode: actual send - intended send (schedule slip); else 0
};

struct OpStats {
  uint64_t ops = 0;
  uint64_t bytes_out = 0;
  uint64_t bytes_in = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;
  uint64_t timeouts = 0;
  uint64_t wrong = 0;
  uint64_t late = 0;
  LatencyHistogram latency;       // every completed request, whatever its outcome
  LatencyHistogram sent_latency;  // rate mode only: from the actual send time
  LatencyHistogram slip;          // rate mode only: intended -> actual send of each request

  // Requests that got an answer (ok, hit or miss): what req/s counts.
  uint64_t ok() const noexcept { return ops - errors - timeouts; }
  uint64_t failed() const noexcept { return errors + timeouts; }

  void record(const RequestRecord& r, bool rate_mode) noexcept {
    ++ops;
    bytes_out += r.bytes_out;
    bytes_in += r.bytes_in;
    wrong += r.wrong;
    late += r.late;
    switch (r.status) {
      case OpStatus::hit:
        ++hits;
        break;
      case OpStatus::miss:
        ++misses;
        break;
      case OpStatus::error:
        ++errors;
        break;
      case OpStatus::timeout:
        ++timeouts;
        break;
      case OpStatus::ok:
        break;
      case OpStatus::interrupted:
        break;  // never recorded (worker.cpp drops them)
    }
    latency.record(r.latency_ns);
    if (rate_mode) {
      sent_latency.record(r.sent_latency_ns);
      slip.record(r.slip_ns);
    }
  }
  void merge(const OpStats& o) noexcept;
  void reset() noexcept { *this = OpStats(); }
};

struct IntervalStats {
  std::array<OpStats, kOpTypes> by_op;
  OpStats& operator[](OpType op) { return by_op[static_cast<size_t>(op)]; }
  const OpStats& operator[](OpType op) const { return by_op[static_cast<size_t>(op)]; }
  void merge(const IntervalStats& o) noexcept;
  void reset() noexcept;
};

// One worker's stats: the worker records into the active buffer; the collector swaps buffers
// and reads the retired one.
class StatsSlot {
 public:
  explicit StatsSlot(bool rate_mode = false) : rate_mode_(rate_mode) {}
  void record(OpType op, const RequestRecord& r) {
    std::lock_guard<std::mutex> lock(mu_);
    (*active_)[op].record(r, rate_mode_);
  }
  // Time the worker spent spinning for a send time (rate mode): CPU the client-bound rule
  // leaves out, since the thread had nothing else to do. A running total, read per worker.
  void add_spin(uint64_t ns) { spin_ns_.fetch_add(ns, std::memory_order_relaxed); }
  uint64_t spin_ns_total() const { return spin_ns_.load(std::memory_order_relaxed); }
  // A Redis Cluster redirect the worker followed (MOVED, or ASK when `ask`): running totals,
  // read per worker for the per-second row, as the spin time.
  void add_redirect(bool ask) { (ask ? asked_ : moved_).fetch_add(1, std::memory_order_relaxed); }
  uint64_t moved_total() const { return moved_.load(std::memory_order_relaxed); }
  uint64_t asked_total() const { return asked_.load(std::memory_order_relaxed); }
  // Collector only: swaps buffers and merges what the worker recorded since the last call into
  // `into`.
  void drain_into(IntervalStats& into);

 private:
  std::mutex mu_;
  IntervalStats a_, b_;
  IntervalStats* active_ = &a_;
  bool rate_mode_;
  std::atomic<uint64_t> spin_ns_{0};
  std::atomic<uint64_t> moved_{0}, asked_{0};
};

}  // namespace kv::drive
