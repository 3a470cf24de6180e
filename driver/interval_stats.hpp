// Per-operation counters and latency, recorded by one worker and handed to the collector once
// per second through a double buffer (the only shared state on the request path: one
// uncontended lock per request).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>

#include "kvbench/histogram.hpp"
#include "store_client.hpp"

namespace kv::drive {

enum class OpType : uint8_t { set = 0, get = 1 };
constexpr int kOpTypes = 2;
const char* op_name(OpType op);

struct OpStats {
  uint64_t ops = 0;
  uint64_t bytes_out = 0;
  uint64_t bytes_in = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
  uint64_t errors = 0;
  uint64_t timeouts = 0;
  LatencyHistogram latency;  // every completed request, whatever its outcome

  void record(OpStatus status, uint64_t latency_ns, uint64_t out, uint64_t in) noexcept {
    ++ops;
    bytes_out += out;
    bytes_in += in;
    switch (status) {
      case OpStatus::hit: ++hits; break;
      case OpStatus::miss: ++misses; break;
      case OpStatus::error: ++errors; break;
      case OpStatus::timeout: ++timeouts; break;
      case OpStatus::ok: break;
    }
    latency.record(latency_ns);
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
  void record(OpType op, OpStatus status, uint64_t latency_ns, uint64_t out, uint64_t in) {
    std::lock_guard<std::mutex> lock(mu_);
    (*active_)[op].record(status, latency_ns, out, in);
  }
  // Collector only: swaps buffers and merges what the worker recorded since the last call into
  // `into`.
  void drain_into(IntervalStats& into);

 private:
  std::mutex mu_;
  IntervalStats a_, b_;
  IntervalStats* active_ = &a_;
};

}  // namespace kv::drive
