#include "stats/second_report.hpp"

#include <algorithm>

namespace kv::drive {
namespace {
double us(uint64_t ns) { return static_cast<double>(ns) / 1000.0; }
}  // namespace

SparseHistogram SparseHistogram::of(const LatencyHistogram& h) {
  SparseHistogram s;
  if (h.count() == 0) return s;
  for (int i = 0; i < LatencyHistogram::kBuckets; ++i)
    if (h.bucket_count(i) != 0) s.buckets.emplace_back(i, h.bucket_count(i));
  s.max_ns = h.max_ns();
  return s;
}

uint64_t SparseHistogram::count() const {
  uint64_t n = 0;
  for (const auto& b : buckets) n += b.second;
  return n;
}

LatencyHistogram SparseHistogram::dense() const {
  LatencyHistogram h;
  for (const auto& [index, count] : buckets)
    h.record_n(std::min(LatencyHistogram::bucket_upper_ns(index), max_ns), count);
  return h;
}

OpSecond summarize(const OpStats& s, bool sent) {
  OpSecond o;
  o.sent = sent || s.ops > 0;
  o.ops = s.ops;
  o.ok = s.ok();
  o.bytes_out = s.bytes_out;
  o.bytes_in = s.bytes_in;
  o.hits = s.hits;
  o.misses = s.misses;
  o.errors = s.errors;
  o.timeouts = s.timeouts;
  o.wrong = s.wrong;
  o.late = s.late;
  o.dropped = s.dropped;
  const LatencyHistogram& h = s.latency;
  o.lat_mean_us = h.mean_ns() / 1000.0;
  o.lat_p50_us = us(h.percentile_ns(0.5));
  o.lat_p90_us = us(h.percentile_ns(0.9));
  o.lat_p99_us = us(h.percentile_ns(0.99));
  o.lat_p999_us = us(h.percentile_ns(0.999));
  o.lat_max_us = us(h.max_ns());
  o.sent_p50_us = us(s.sent_latency.percentile_ns(0.5));
  o.sent_p99_us = us(s.sent_latency.percentile_ns(0.99));
  o.sent_max_us = us(s.sent_latency.max_ns());
  o.slip_p50_us = us(s.slip.percentile_ns(0.5));
  o.slip_p99_us = us(s.slip.percentile_ns(0.99));
  o.slip_max_us = us(s.slip.max_ns());
  o.latency = SparseHistogram::of(h);
  o.sent_latency = SparseHistogram::of(s.sent_latency);
  o.queue = SparseHistogram::of(s.queue);
  o.client_send = SparseHistogram::of(s.client_send);
  o.wire = SparseHistogram::of(s.wire);
  o.client_recv = SparseHistogram::of(s.client_recv);
  o.unsplit = s.unsplit;
  if (const PartBins::Bin* b = s.part_bins.at_quantile(0.99)) {
    const double n = static_cast<double>(b->count) * 1000.0;
    o.p99_bin_latency_us = static_cast<double>(b->latency_ns) / n;
    o.p99_client_send_us = static_cast<double>(b->client_send_ns) / n;
    o.p99_client_recv_us = static_cast<double>(b->client_recv_ns) / n;
    o.p99_client_us = o.p99_client_send_us + o.p99_client_recv_us;
  }
  return o;
}

}  // namespace kv::drive
