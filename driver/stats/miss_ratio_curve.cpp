#include "stats/miss_ratio_curve.hpp"

#include <algorithm>
#include <cmath>

namespace kv::drive {
namespace {

constexpr size_t kExact = 1024;      // positions below this binned one by one
constexpr double kBinRatio = 1.005;  // then bins 0.5 % wide

}  // namespace

// FNV-1a, then splitmix64's finalizer: FNV alone leaves the high bits, which the threshold
// compares, poorly mixed for short keys that differ in their last characters.
uint64_t sample_hash(std::string_view key) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : key) h = (h ^ c) * 0x100000001b3ULL;
  h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
  h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
  return h ^ (h >> 31);
}

void KeySample::see(std::string_view key) {
  const uint64_t h = sample_hash(key);
  if (smallest_.size() == max_keys_ && h > *smallest_.rbegin()) {
    dropped_ = true;
    return;
  }
  if (smallest_.insert(h).second && smallest_.size() > max_keys_) {
    smallest_.erase(std::prev(smallest_.end()));
    dropped_ = true;
  }
}

uint64_t KeySample::threshold() const { return dropped_ ? *smallest_.rbegin() : UINT64_MAX; }

MissRatioCurve::MissRatioCurve(uint64_t threshold, size_t max_keys)
    : threshold_(threshold),
      objects_tree_(4 * std::max<size_t>(max_keys, 1) + 17, 0),
      bytes_tree_(4 * std::max<size_t>(max_keys, 1) + 17, 0) {}

double MissRatioCurve::sampling_rate() const {
  if (threshold_ == UINT64_MAX) return 1.0;
  return (static_cast<double>(threshold_) + 1.0) * 0x1.0p-64;
}

size_t MissRatioCurve::bin_of(double position) {
  if (position < static_cast<double>(kExact)) return static_cast<size_t>(std::max(position, 0.0));
  return kExact + static_cast<size_t>(std::log(position / kExact) / std::log(kBinRatio));
}

double MissRatioCurve::bin_low(size_t bin) {
  if (bin < kExact) return static_cast<double>(bin);
  return kExact * std::pow(kBinRatio, static_cast<double>(bin - kExact));
}

void MissRatioCurve::add_weight(uint64_t time, int64_t objects, int64_t bytes) {
  objects_total_ += objects;
  bytes_total_ += bytes;
  for (size_t i = time; i < objects_tree_.size(); i += i & (~i + 1)) {
    objects_tree_[i] += objects;
    bytes_tree_[i] += bytes;
  }
}

uint64_t MissRatioCurve::count_after(uint64_t time, bool bytes) const {
  const std::vector<int64_t>& tree = bytes ? bytes_tree_ : objects_tree_;
  const auto prefix = [&](size_t i) {
    int64_t sum = 0;
    for (; i > 0; i -= i & (~i + 1)) sum += tree[i];
    return sum;
  };
  return static_cast<uint64_t>((bytes ? bytes_total_ : objects_total_) - prefix(time));
}

// The clock ran to the trees' end: the followed keys renumbered 1..n in the order of their
// last access (all that a distance depends on), the trees built anew.
void MissRatioCurve::compact() {
  std::vector<std::pair<uint64_t, uint64_t>> by_time;  // (time, hash)
  by_time.reserve(keys_.size());
  for (const auto& [hash, e] : keys_) by_time.emplace_back(e.time, hash);
  std::sort(by_time.begin(), by_time.end());
  std::fill(objects_tree_.begin(), objects_tree_.end(), 0);
  std::fill(bytes_tree_.begin(), bytes_tree_.end(), 0);
  objects_total_ = bytes_total_ = 0;
  clock_ = 0;
  for (const auto& [time, hash] : by_time) {
    Entry& e = keys_.at(hash);
    e.time = ++clock_;
    add_weight(e.time, 1, e.size);
  }
}

void MissRatioCurve::access_hashed(uint64_t hash, uint32_t size, CacheAccess kind) {
  if (kind == CacheAccess::read) ++reads_;
  if (hash > threshold_) return;
  if (clock_ + 1 >= objects_tree_.size()) compact();
  const auto it = keys_.find(hash);
  if (it == keys_.end()) {
    if (kind == CacheAccess::remove) return;
    if (kind == CacheAccess::read) cold_ += 1;
  } else {
    if (kind == CacheAccess::read) {
      const double rate = sampling_rate();
      const double objects = static_cast<double>(count_after(it->second.time, false)) / rate + 1;
      const double bytes = static_cast<double>(count_after(it->second.time, true)) / rate + size;
      const size_t ob = bin_of(objects), bb = bin_of(bytes);
      if (ob >= objects_hist_.size()) objects_hist_.resize(ob + 1, 0.0);
      if (bb >= bytes_hist_.size()) bytes_hist_.resize(bb + 1, 0.0);
      objects_hist_[ob] += 1;
      bytes_hist_[bb] += 1;
    }
    add_weight(it->second.time, -1, -static_cast<int64_t>(it->second.size));
    if (kind == CacheAccess::remove) {
      keys_.erase(it);
      return;
    }
  }
  const Entry e{++clock_, size};
  keys_[hash] = e;
  add_weight(e.time, 1, e.size);
}

std::vector<MissRatioCurve::Point> MissRatioCurve::curve(const std::vector<double>& histogram,
                                                         const std::vector<uint64_t>& sizes) const {
  double sampled = cold_;
  for (double w : histogram) sampled += w;
  // SHARDS_adj: the reads followed fall short of (or exceed) the rate times all reads mostly
  // because a few hot keys were (or were not) followed; the difference counts as reads that hit
  // in any cache, which is what a hot key's reads are.
  const double expected = sampling_rate() * static_cast<double>(reads_);
  const double total = std::max(expected, sampled);
  std::vector<Point> out;
  for (uint64_t c : sizes) {
    double hits = total - sampled;
    for (size_t b = 0; b < histogram.size() && bin_low(b) <= static_cast<double>(c); ++b)
      hits += histogram[b];
    out.push_back({c, total > 0 ? 1.0 - hits / total : 1.0});
  }
  return out;
}

std::vector<MissRatioCurve::Point> MissRatioCurve::by_objects(
    const std::vector<uint64_t>& sizes) const {
  return curve(objects_hist_, sizes);
}

std::vector<MissRatioCurve::Point> MissRatioCurve::by_bytes(
    const std::vector<uint64_t>& sizes) const {
  return curve(bytes_hist_, sizes);
}

}  // namespace kv::drive
