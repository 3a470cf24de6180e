#include "stats/interval_stats.hpp"

namespace kv::drive {

const char* op_name(OpType op) { return op == OpType::set ? "set" : "get"; }

void OpStats::merge(const OpStats& o) noexcept {
  ops += o.ops;
  bytes_out += o.bytes_out;
  bytes_in += o.bytes_in;
  hits += o.hits;
  misses += o.misses;
  errors += o.errors;
  timeouts += o.timeouts;
  wrong += o.wrong;
  late += o.late;
  latency.merge(o.latency);
  sent_latency.merge(o.sent_latency);
  slip.merge(o.slip);
}

void IntervalStats::merge(const IntervalStats& o) noexcept {
  for (size_t i = 0; i < by_op.size(); ++i) by_op[i].merge(o.by_op[i]);
}

void IntervalStats::reset() noexcept {
  for (auto& s : by_op) s.reset();
}

void StatsSlot::drain_into(IntervalStats& into) {
  IntervalStats* retired = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    retired = active_;
    active_ = (active_ == &a_) ? &b_ : &a_;
  }
  into.merge(*retired);
  retired->reset();
}

}  // namespace kv::drive
