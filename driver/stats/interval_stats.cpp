#include "stats/interval_stats.hpp"

#include <cmath>

namespace kv::drive {

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
  dropped += o.dropped;
  latency.merge(o.latency);
  sent_latency.merge(o.sent_latency);
  slip.merge(o.slip);
  queue.merge(o.queue);
  client_send.merge(o.client_send);
  wire.merge(o.wire);
  client_recv.merge(o.client_recv);
  unsplit += o.unsplit;
  part_bins.merge(o.part_bins);
}

uint64_t PartBins::bin_upper_ns(int b) noexcept {
  if (b < 2) return static_cast<uint64_t>(b);
  const int top = b / 2;
  // [2^top, 1.5 * 2^top) for the lower half, [1.5 * 2^top, 2^(top+1)) for the upper.
  const uint64_t base = uint64_t{1} << top;
  return (b % 2 == 0 ? base + base / 2 : 2 * base) - 1;
}

void PartBins::merge(const PartBins& o) noexcept {
  for (size_t i = 0; i < bins.size(); ++i) {
    Bin& x = bins[i];
    const Bin& y = o.bins[i];
    x.count += y.count;
    x.latency_ns += y.latency_ns;
    x.queue_ns += y.queue_ns;
    x.client_send_ns += y.client_send_ns;
    x.wire_ns += y.wire_ns;
    x.client_recv_ns += y.client_recv_ns;
  }
}

uint64_t PartBins::count() const noexcept {
  uint64_t n = 0;
  for (const Bin& b : bins) n += b.count;
  return n;
}

const PartBins::Bin* PartBins::at_quantile(double q) const noexcept {
  const uint64_t total = count();
  if (total == 0) return nullptr;
  const auto rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(total)));
  uint64_t seen = 0;
  for (const Bin& b : bins) {
    seen += b.count;
    if (b.count > 0 && seen >= rank) return &b;
  }
  return nullptr;
}

IntervalStats& IntervalStats::operator=(const IntervalStats& o) {
  if (this == &o) return *this;
  for (size_t i = 0; i < kOpTypes; ++i)
    by_op_[i] = o.by_op_[i] ? std::make_unique<OpStats>(*o.by_op_[i]) : nullptr;
  return *this;
}

const OpStats& IntervalStats::empty_op() {
  static const OpStats empty;
  return empty;
}

void IntervalStats::merge(const IntervalStats& o) {
  for (OpType op : kAllOps) {
    const OpStats& s = o[op];
    if (!s.empty()) (*this)[op].merge(s);
  }
}

void IntervalStats::reset() noexcept {
  for (auto& p : by_op_)
    if (p && !p->empty()) p->reset();
}

void StatsSlot::set_pool_servers(size_t servers) {
  pool_ = std::make_unique<std::atomic<uint64_t>[]>(servers * kPoolCounts);
  for (size_t i = 0; i < servers * kPoolCounts; ++i) pool_[i].store(0, std::memory_order_relaxed);
  pool_servers_ = servers;
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
