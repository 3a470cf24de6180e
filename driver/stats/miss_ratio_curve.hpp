// The LRU miss-ratio curve of a request stream, the miss ratio of its reads as a function of
// cache size, in objects and in bytes, by SHARDS (Waldspurger et al., "Efficient MRC
// Construction with SHARDS", FAST '15): only keys whose hash falls at or under a threshold are
// followed, their reuse distances scaled by the sampling rate, and the reads the followed keys
// fall short of the rate's share counted as hits at every size (SHARDS_adj). The threshold is
// chosen in a first pass over the keys (KeySample: the hash of the `max_keys`-th smallest, so
// at most that many keys are followed and memory stays bounded whatever the trace's length and
// key count); the second pass builds the curve at that fixed rate. (The one-pass fixed-size
// variant lowers the threshold as keys arrive and keeps the first accesses of keys it later
// drops: on a 300,000-request trace that biased the curve by up to 0.1.) With no more distinct
// keys than `max_keys`, every key is followed and the curve is exact.
//
// The cache modelled: LRU, demand-filled (a read that misses brings the object in), writes
// bring in or refresh the object at their size, deletes take it out. A read hits a cache of C
// objects when fewer than C distinct objects were touched since its key's last access, and a
// cache of C bytes when their sizes plus its own fit in C. (Deletes make LRU no stack
// algorithm: the slot a delete frees is filled before anything is evicted, while the curve
// takes the object out of every size at once.) The errors measured: NOTES.md, "Miss-ratio
// curves".
#pragma once

#include <cstdint>
#include <set>
#include <string_view>
#include <unordered_map>
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

class MissRatioCurve {
 public:
  // Follows the keys whose hash is at most `threshold` (KeySample's), at most `max_keys` of them.
  explicit MissRatioCurve(uint64_t threshold = UINT64_MAX, size_t max_keys = 8192);

  // One request for `key`, whose object has `size` bytes.
  void access(std::string_view key, uint32_t size, CacheAccess kind) {
    access_hashed(sample_hash(key), size, kind);
  }
  // The same for a key whose sample_hash the caller has already.
  void access_hashed(uint64_t hash, uint32_t size, CacheAccess kind);

  struct Point {
    uint64_t cache;     // objects or bytes
    double miss_ratio;  // of the reads; 1 before any read was seen
  };
  // The miss ratio of a cache of each of `sizes` objects (or bytes).
  std::vector<Point> by_objects(const std::vector<uint64_t>& sizes) const;
  std::vector<Point> by_bytes(const std::vector<uint64_t>& sizes) const;

  double sampling_rate() const;              // 1 while every key is followed
  uint64_t reads() const { return reads_; }  // every read seen, followed or not
  size_t keys_followed() const { return keys_.size(); }

 private:
  struct Entry {
    uint64_t time;  // the followed accesses' clock at its last access
    uint32_t size;
  };
  // Reuse positions binned: exact up to 1,024, then log-spaced bins 0.5 % wide.
  static size_t bin_of(double position);
  static double bin_low(size_t bin);
  std::vector<Point> curve(const std::vector<double>& histogram,
                           const std::vector<uint64_t>& sizes) const;
  void add_weight(uint64_t time, int64_t objects, int64_t bytes);
  uint64_t count_after(uint64_t time, bool bytes) const;
  void compact();

  uint64_t threshold_;
  uint64_t reads_ = 0, clock_ = 0;
  std::unordered_map<uint64_t, Entry> keys_;  // by hash
  // Fenwick trees over the clock (1-based): 1 and the size at each key's last access; and
  // their totals (the followed keys and their bytes).
  std::vector<int64_t> objects_tree_, bytes_tree_;
  int64_t objects_total_ = 0, bytes_total_ = 0;
  std::vector<double> objects_hist_, bytes_hist_;  // the followed reads per bin
  double cold_ = 0;                                // reads never seen before (or after delete)
};

}  // namespace kv::drive
