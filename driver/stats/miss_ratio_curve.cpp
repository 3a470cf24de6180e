#include "stats/miss_ratio_curve.hpp"

#include <algorithm>
#include <cmath>

namespace kv::drive {
namespace {

constexpr size_t kExact = 1024;      // positions below this binned one by one
constexpr double kBinRatio = 1.005;  // then bins 0.5 % wide
constexpr size_t kFirstKeys = 16;    // a RecencyStack's room at first (a power of two)

size_t low_bit(size_t i) { return i & (~i + 1); }

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

RecencyStack::RecencyStack()
    : places_(kFirstKeys * 2), slots_(4 * kFirstKeys + 17), tree_(slots_.size()) {}

size_t RecencyStack::place_of(uint64_t hash) const {
  const size_t mask = places_.size() - 1;
  size_t p = hash & mask;
  while (places_[p].time != 0 && places_[p].hash != hash) p = (p + 1) & mask;
  return p;
}

// Linear probing's deletion: the keys after the place, up to an empty one, that would be
// reached from their home only through it move back into it.
void RecencyStack::erase_place(size_t place) {
  const size_t mask = places_.size() - 1;
  for (size_t next = (place + 1) & mask; places_[next].time != 0; next = (next + 1) & mask) {
    const size_t home = places_[next].hash & mask;
    if (((next - home) & mask) >= ((next - place) & mask)) {
      places_[place] = places_[next];
      place = next;
    }
  }
  places_[place] = Place{};
  --keys_;
}

void RecencyStack::rehash(size_t places) {
  std::vector<Place> old(places, Place{});
  old.swap(places_);
  for (const Place& p : old)
    if (p.time != 0) places_[place_of(p.hash)] = p;
}

void RecencyStack::add(uint64_t time, Weight w) {
  total_.objects += w.objects;
  total_.bytes += w.bytes;
  for (size_t i = time; i < tree_.size(); i += low_bit(i)) {
    tree_[i].objects += w.objects;
    tree_[i].bytes += w.bytes;
  }
}

RecencyStack::Above RecencyStack::above(uint64_t time) const {
  Weight w = total_;
  for (size_t i = time; i > 0; i -= low_bit(i)) {
    w.objects -= tree_[i].objects;
    w.bytes -= tree_[i].bytes;
  }
  return {static_cast<uint64_t>(w.objects), static_cast<uint64_t>(w.bytes)};
}

// The clock ran to the slots' end: the live ones renumbered 1..n in their order (all that a
// position depends on), moved down in place, the tree built anew in linear time (each node
// adding itself to its parent). Room for four times the keys held, so that this comes once per
// 3n accesses or less, and allocates only when the keys held outgrew it (so a stack's memory
// follows the most keys it held).
void RecencyStack::renumber() {
  const uint64_t last = clock_;
  clock_ = 0;
  for (uint64_t t = oldest_; t <= last; ++t) {
    if (!slots_[t].live) continue;
    slots_[++clock_] = slots_[t];
    places_[place_of(slots_[clock_].hash)].time = clock_;
  }
  for (uint64_t t = clock_ + 1; t <= last; ++t) slots_[t] = Slot{};
  oldest_ = 1;
  if (4 * clock_ + 17 > slots_.size()) {
    slots_.resize(4 * clock_ + 17);
    tree_.resize(slots_.size());
  }
  std::fill(tree_.begin(), tree_.end(), Weight{});
  total_ = Weight{};
  for (uint64_t t = 1; t <= clock_; ++t) {
    tree_[t] = {1, slots_[t].size};
    total_.objects += 1;
    total_.bytes += slots_[t].size;
  }
  for (size_t t = 1; t < tree_.size(); ++t) {
    if (const size_t parent = t + low_bit(t); parent < tree_.size()) {
      tree_[parent].objects += tree_[t].objects;
      tree_[parent].bytes += tree_[t].bytes;
    }
  }
}

bool RecencyStack::touch(uint64_t hash, uint32_t size, bool remove, Above& above_it) {
  if (clock_ + 1 >= slots_.size()) renumber();
  const size_t place = place_of(hash);
  Place& p = places_[place];
  const bool held = p.time != 0;
  if (held) {
    Slot& old = slots_[p.time];
    above_it = above(p.time);
    add(p.time, {-1, -static_cast<int64_t>(old.size)});
    old.live = false;
    if (remove) {
      erase_place(place);
      return true;
    }
    p.time = ++clock_;
  } else {
    if (remove) return false;
    p = {hash, ++clock_};
    if (++keys_ * 2 > places_.size()) rehash(2 * places_.size());
  }
  slots_[clock_] = {hash, size, true};
  add(clock_, {1, size});
  return held;
}

void RecencyStack::drop_oldest() {
  if (keys_ == 0) return;
  while (!slots_[oldest_].live) ++oldest_;
  Slot& s = slots_[oldest_];
  add(oldest_, {-1, -static_cast<int64_t>(s.size)});
  s.live = false;
  erase_place(place_of(s.hash));
}

MissRatioCurve::MissRatioCurve(uint64_t threshold, size_t max_keys)
    : threshold_(threshold), max_keys_(std::max<size_t>(max_keys, 1)) {}

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

void MissRatioCurve::count(std::vector<double>& histogram, size_t bin) {
  if (bin >= histogram.size()) histogram.resize(bin + 1, 0.0);
  histogram[bin] += 1;
}

// A read of a key among the max_keys most recent has its reuse position exactly: the keys above
// it plus itself; in bytes, theirs plus its own size. One of another key (never seen, deleted or
// dropped) is no higher in the unbounded LRU stack than all the keys held, each more recent
// than it: it misses every cache no larger than they are. So the curve is exact up to the least
// they were at such a read once a key was dropped (before that, every key not held is new or
// deleted, and misses at every size).
MissRatioCurve::Below MissRatioCurve::follow_recent(uint64_t hash, uint32_t size,
                                                    CacheAccess kind) {
  const bool read = kind == CacheAccess::read;
  reads_ += read;
  RecencyStack::Above above;
  if (recent_.touch(hash, size, kind == CacheAccess::remove, above)) {
    if (read) {
      count(recent_objects_hist_, above.objects + 1);
      count(recent_bytes_hist_, bin_of(static_cast<double>(above.bytes) + size));
    }
    return {};
  }
  Below below;
  if (read) {
    // recent_ holds the key now (a read brings it in): it held one key and `size` bytes less.
    below = {true, recent_.keys() - 1, recent_.bytes() - size};
    ++recent_misses_;
    if (dropped_) {
      exact_objects_ = std::min(exact_objects_, below.keys);
      exact_bytes_ = std::min(exact_bytes_, below.bytes);
    }
  }
  if (recent_.keys() > max_keys_) {
    recent_.drop_oldest();
    dropped_ = true;
  }
  return below;
}

// SHARDS over the reads recent_ missed: a followed key's reuse position is the followed keys
// above it scaled by the sampling rate, but no less than what recent_ held (which it is known to
// be below); each such read stands for recent_misses_ / sampled_misses_ of them (SHARDS_adj's
// correction, taken where the hottest keys, which decide it, are no longer).
void MissRatioCurve::follow_sampled(uint64_t hash, uint32_t size, CacheAccess kind,
                                    const Below& below) {
  RecencyStack::Above above;
  const bool held = sampled_.touch(hash, size, kind == CacheAccess::remove, above);
  if (!below.read_missed) return;
  ++sampled_misses_;
  if (!held) return;  // never seen, or deleted since: a miss at every size
  const double rate = sampling_rate();
  const double objects = static_cast<double>(above.objects) / rate + 1;
  const double bytes = static_cast<double>(above.bytes) / rate + size;
  count(objects_hist_, bin_of(std::max(objects, static_cast<double>(below.keys) + 1)));
  count(bytes_hist_, bin_of(std::max(bytes, static_cast<double>(below.bytes) + size)));
}

double MissRatioCurve::hits_within(const std::vector<double>& histogram, uint64_t cache,
                                   bool binned) {
  double hits = 0;
  for (size_t b = 0; b < histogram.size(); ++b) {
    if (binned ? bin_low(b) > static_cast<double>(cache) : b > cache) break;
    hits += histogram[b];
  }
  return hits;
}

// The hits of the reads recent_ held, exact, plus those of the reads it missed, estimated.
std::vector<MissRatioCurve::Point> MissRatioCurve::curve(const std::vector<double>& recent,
                                                         bool binned,
                                                         const std::vector<double>& sampled,
                                                         const std::vector<uint64_t>& sizes) const {
  const double scale = sampled_misses_ > 0 ? static_cast<double>(recent_misses_) /
                                                 static_cast<double>(sampled_misses_)
                                           : 0.0;
  std::vector<Point> out;
  for (uint64_t c : sizes) {
    if (reads_ == 0) {
      out.push_back({c, 1.0});
      continue;
    }
    const double hits = hits_within(recent, c, binned) + scale * hits_within(sampled, c, true);
    out.push_back({c, std::clamp(1.0 - hits / static_cast<double>(reads_), 0.0, 1.0)});
  }
  return out;
}

std::vector<MissRatioCurve::Point> MissRatioCurve::by_objects(
    const std::vector<uint64_t>& sizes) const {
  return curve(recent_objects_hist_, false, objects_hist_, sizes);
}

std::vector<MissRatioCurve::Point> MissRatioCurve::by_bytes(
    const std::vector<uint64_t>& sizes) const {
  return curve(recent_bytes_hist_, true, bytes_hist_, sizes);
}

}  // namespace kv::drive
