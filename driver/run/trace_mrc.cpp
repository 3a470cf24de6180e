#include "run/trace_mrc.hpp"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "stats/miss_ratio_curve.hpp"
#include "workload/trace.hpp"

namespace kv::drive {
namespace {

CacheAccess access_of(TraceOp op) {
  if (trace_op_reads(op)) return CacheAccess::read;
  return op == TraceOp::del ? CacheAccess::remove : CacheAccess::write;
}

}  // namespace

TraceCurve trace_miss_ratio_curve(const std::string& path, size_t max_keys,
                                  const std::vector<double>& fractions) {
  KeySample sample(max_keys);
  {
    TraceReader first(path);
    while (auto r = first.next()) sample.see(r->key);
  }
  const uint64_t threshold = sample.threshold();
  MissRatioCurve curve(threshold, max_keys);
  std::unordered_map<uint64_t, uint32_t> largest;  // the followed keys' largest size
  TraceCurve out;
  TraceReader second(path);
  while (auto r = second.next()) {
    ++out.requests;
    const uint32_t size = r->key_size + r->value_size;
    const uint64_t h = sample_hash(r->key);
    curve.access_hashed(h, size, access_of(r->op));
    if (h <= threshold) {
      uint32_t& l = largest[h];
      l = std::max(l, size);
    }
  }
  out.reads = curve.reads();
  out.keys_followed = largest.size();
  out.sampling_rate = curve.sampling_rate();
  double bytes = 0;
  for (const auto& [hash, size] : largest) bytes += size;
  out.keys = static_cast<double>(largest.size()) / out.sampling_rate;
  out.bytes = bytes / out.sampling_rate;
  std::vector<uint64_t> objects, byte_sizes;
  for (double f : fractions) {
    objects.push_back(std::max<uint64_t>(1, std::llround(f * out.keys)));
    byte_sizes.push_back(std::max<uint64_t>(1, std::llround(f * out.bytes)));
  }
  const auto by_objects = curve.by_objects(objects);
  const auto by_bytes = curve.by_bytes(byte_sizes);
  for (size_t i = 0; i < fractions.size(); ++i)
    out.rows.push_back({fractions[i], objects[i], by_objects[i].miss_ratio, byte_sizes[i],
                        by_bytes[i].miss_ratio});
  return out;
}

}  // namespace kv::drive
