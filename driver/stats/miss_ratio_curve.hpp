// The LRU miss-ratio curve of a request stream, the miss ratio of its reads as a function of
// cache size, in objects and in bytes, in two parts with memory bounded by `max_keys` keys
// whatever the trace's length and key count (about 400 bytes each, two RecencyStacks, for as
// many keys as the trace has up to that):
//  - exact: the `max_keys` most recently accessed keys of all, an LRU stack truncated there. A
//    read of a key it holds has its reuse position exactly; one of a key it does not hold is
//    below all of them, so it misses every cache no larger than they are. Small caches, where
//    a few hot keys decide the curve, are thus exact (exact_objects(), exact_bytes()).
//  - sampled, for the reads the exact part missed: SHARDS (Waldspurger et al., "Efficient MRC
//    Construction with SHARDS", FAST '15) follows only the keys whose hash falls at or under a
//    threshold and scales their reuse positions by the sampling rate (each position no less
//    than what the exact part held, which it is known to exceed), each read standing for the
//    exact part's misses over the followed keys' misses (SHARDS_adj's correction, with the hot
//    keys that drive it already counted exactly). The threshold is chosen in a first pass over
//    the keys (KeySample: the hash of the `max_keys`-th smallest); the second pass builds the
//    curve at that fixed rate. (The one-pass fixed-size variant lowers the threshold as keys
//    arrive and keeps the first accesses of keys it later drops: on a 300,000-request trace
//    that biased the curve by up to 0.1.)
// With no more distinct keys than `max_keys`, the curve is exact at every size.
//
// The cache modelled: LRU, demand-filled (a read that misses brings the object in), writes
// bring in or refresh the object at their size, deletes take it out. A read hits a cache of C
// objects when fewer than C distinct objects were touched since its key's last access, and a
// cache of C bytes when their sizes plus its own fit in C. (Deletes make LRU no stack
// algorithm: the slot a delete frees is filled before anything is evicted, while the curve
// takes the object out of every size at once.) The errors measured, against an exact LRU
// simulation (tests/driver/stats/miss_ratio_curve_test.cpp; 300,000 requests over 100,000 keys,
// zipf 0.8, 2,048 keys followed): at most 0.007 at 20 sizes from 0.5 % of the keys (and 1 MB)
// up, the exact part's sizes to within 0.0003; NOTES.md, "Miss-ratio curves", has more.
#pragma once

#include <cstdint>
#include <set>
#include <string_view>
#include <vector>

namespace kv::drive {

enum class CacheAccess : uint8_t { read, write, remove };

// The 64-bit hash of a key by which keys are sampled.
uint64_t sample_hash(std::string_view key);

// The first pass: the threshold under which at most `max_keys` of the keys seen fall.
class KeySample {
 public:
  explicit KeySample(size_t max_keys = 8192) : max_keys_(max_keys < 1 ? 1 : max_keys) {}
  void see(std::string_view key);
  uint64_t threshold() const;  // UINT64_MAX while no more than max_keys keys were seen
  size_t max_keys() const { return max_keys_; }

 private:
  size_t max_keys_;
  std::set<uint64_t> smallest_;  // the max_keys smallest hashes seen
  bool dropped_ = false;         // more keys than that were seen
};

// The distinct keys of a request stream in the order of their last access, and for any of them
// how many keys, and bytes, were accessed after it: Fenwick trees of 1 and of the size at each
// key's last access over a logical clock (1-based), renumbered when the clock runs to their end;
// the keys' last access times in an open-addressing table (linear probing on the hash's low
// bits: no allocation and mostly one cache line per access, on every request of a trace). It
// grows with the keys it holds, to about 192 bytes each.
class RecencyStack {
 public:
  RecencyStack();

  struct Above {
    uint64_t objects = 0, bytes = 0;  // the keys accessed after a key's last access, their bytes
  };
  // The key to the top at `size` bytes (`remove`: out); whether it was held, and if so, what
  // was above it in `above`.
  bool touch(uint64_t hash, uint32_t size, bool remove, Above& above);
  void drop_oldest();  // the least recently accessed key out; none held: nothing
  size_t keys() const { return keys_; }
  uint64_t bytes() const { return static_cast<uint64_t>(total_.bytes); }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t size = 0;
    bool live = false;  // this time is its key's last access
  };
  struct Weight {
    int64_t objects = 0, bytes = 0;
  };
  struct Place {
    uint64_t hash = 0, time = 0;  // time 0: empty
  };
  size_t place_of(uint64_t hash) const;  // the key's place, or the empty one where it would go
  void erase_place(size_t place);
  void rehash(size_t places);
  void add(uint64_t time, Weight w);
  Above above(uint64_t time) const;
  void renumber();

  size_t keys_ = 0;
  std::vector<Place> places_;  // a power of two of them, at most half full
  std::vector<Slot> slots_;    // by time
  std::vector<Weight> tree_;   // by time
  Weight total_;
  uint64_t clock_ = 0, oldest_ = 1;  // the last time given out; no live slot before oldest_
};

class MissRatioCurve {
 public:
  // Follows the `max_keys` most recently accessed keys of all, and the keys whose hash is at
  // most `threshold` (KeySample's): at most `max_keys` of them with its threshold (more make
  // the sampled part grow).
  explicit MissRatioCurve(uint64_t threshold = UINT64_MAX, size_t max_keys = 8192);

  // One request for `key`, whose object has `size` bytes.
  void access(std::string_view key, uint32_t size, CacheAccess kind) {
    access_hashed(sample_hash(key), size, kind);
  }
  // The same for a key whose sample_hash the caller has already.
  void access_hashed(uint64_t hash, uint32_t size, CacheAccess kind) {
    const Below below = follow_recent(hash, size, kind);
    if (hash <= threshold_) follow_sampled(hash, size, kind, below);
  }

  struct Point {
    uint64_t cache;     // objects or bytes
    double miss_ratio;  // of the reads; 1 before any read was seen
  };
  // The miss ratio of a cache of each of `sizes` objects (or bytes).
  std::vector<Point> by_objects(const std::vector<uint64_t>& sizes) const;
  std::vector<Point> by_bytes(const std::vector<uint64_t>& sizes) const;

  double sampling_rate() const;              // 1 while every key is followed
  uint64_t reads() const { return reads_; }  // every read seen, followed or not
  size_t keys_followed() const { return sampled_.keys(); }
  // The largest caches, in objects and in bytes, up to which the curve is exact (in bytes, up to
  // the 0.5 % bins): the most recent keys alone decided every read's hit or miss there.
  // UINT64_MAX while they decided every read at every size.
  uint64_t exact_objects() const { return exact_objects_; }
  uint64_t exact_bytes() const { return exact_bytes_; }

 private:
  // A read that the most recent keys missed: the keys and bytes they held, all above it.
  struct Below {
    bool read_missed = false;
    uint64_t keys = 0, bytes = 0;
  };
  // Reuse positions binned: one by one below 1,024, then log-spaced bins 0.5 % wide.
  static size_t bin_of(double position);
  static double bin_low(size_t bin);
  static void count(std::vector<double>& histogram, size_t bin);
  // The reads of `histogram` at positions up to `cache`: binned by bin_of, or one by one.
  static double hits_within(const std::vector<double>& histogram, uint64_t cache, bool binned);
  // `recent` binned (bytes) or one by one (objects).
  std::vector<Point> curve(const std::vector<double>& recent, bool binned,
                           const std::vector<double>& sampled,
                           const std::vector<uint64_t>& sizes) const;
  Below follow_recent(uint64_t hash, uint32_t size, CacheAccess kind);
  void follow_sampled(uint64_t hash, uint32_t size, CacheAccess kind, const Below& below);

  uint64_t threshold_;
  size_t max_keys_;
  uint64_t reads_ = 0;
  // The max_keys most recent keys of all; the reads they held by reuse position (in objects one
  // by one, in bytes binned), and the count of those they missed.
  RecencyStack recent_;
  std::vector<double> recent_objects_hist_, recent_bytes_hist_;
  uint64_t recent_misses_ = 0;
  bool dropped_ = false;  // a key was dropped from recent_
  uint64_t exact_objects_ = UINT64_MAX, exact_bytes_ = UINT64_MAX;
  // SHARDS over the reads recent_ missed: the followed keys; their reads (of those) by bin of
  // estimated reuse position, and the count of them, those never seen before (or since a
  // delete) included.
  RecencyStack sampled_;
  std::vector<double> objects_hist_, bytes_hist_;
  uint64_t sampled_misses_ = 0;
};

}  // namespace kv::drive
