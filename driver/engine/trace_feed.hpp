// A replay's requests (run --trace) for one worker's streams. Every worker reads the whole
// trace (~100 ns a line to parse and hash: with T threads a request costs T times that, ~8 % of
// a 5 µs request at 4 threads; NOTES.md, "Trace replay") and keeps the records whose key falls
// to one of its streams: key id modulo the phase's streams, over every worker and process, so each
// key's requests leave on one connection, in file order.
//
// Recorded timing: the trace's timestamps are whole seconds, so a second's records are spread
// evenly over it in file order (record j of n at j/n s), all divided by --speed; a second is read
// whole before any of it is handed out (n must be known), at most kLookaheadNs before it begins.
// A record with a timestamp below the one before it belongs to the current second. Fast timing:
// no send times; the records are read as the streams ask, at most kMaxBuffered waiting.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/grow_ring.hpp"
#include "kvbench/op_type.hpp"
#include "workload/trace.hpp"
#include "workload/workload.hpp"

namespace kv::drive {

// One request of the trace as a stream sends it.
struct TraceItem {
  int64_t due_ns = 0;       // recorded timing: its send time after the phase's start
  uint64_t key = 0;         // trace_key_id (scaled), | kCounterKey for incr and decr
  uint32_t value_size = 0;  // recorded, at most kTraceMaxValue
  uint32_t ttl_s = 0;
  uint8_t key_size = 0;  // recorded, at most kMaxKeySize
  OpType op = OpType::get;
};

class TraceFeed {
 public:
  static constexpr int64_t kLookaheadNs = 1'000'000'000;
  static constexpr size_t kMaxBuffered = 1 << 16;

  // The streams first .. first + streams - 1 of `stream_count`; at most `limit` requests of the
  // whole trace (0: all). Throws TraceError when the file cannot be opened.
  TraceFeed(const TraceReplay& spec, uint64_t first, size_t streams, uint64_t stream_count,
            uint64_t limit, bool redis);

  enum class Next { item, later, end };
  // Stream `s`'s (0-based among this worker's) next request, reading ahead as needed. later:
  // none is read yet (recorded: until read_next_at(); fast: others must send first).
  Next peek(size_t s, int64_t elapsed_ns, const TraceItem** item);
  void pop(size_t s);
  // Recorded timing: the elapsed time at which the next unread second may be read.
  int64_t read_next_at() const;
  // Stream s's requests due before `by_ns` (elapsed), taken out and counted per op into `out`.
  void drop_due(size_t s, int64_t by_ns, std::array<uint64_t, kOpTypes>& out);
  // A line that did not parse (or a read that failed): "FILE:LINE: why"; the replay ends there.
  const std::string& error() const { return error_; }
  bool recorded() const { return !spec_.fast; }

 private:
  bool read_second();  // recorded: the next second's records; false at the end
  bool read_one();     // fast: the next record; false at the end
  // The next record into rec_; false at the end, past the limit or at an error.
  bool next_record();
  // rec_ as its stream sends it, when the record is replayed (--trace-keys-scale) and its stream
  // is one of this worker's: the stream (0-based here) and the item.
  std::optional<std::pair<size_t, TraceItem>> item_of_record();
  void push(size_t s, const TraceItem& t);

  TraceReplay spec_;
  TraceReader reader_;
  uint64_t first_, stream_count_;
  uint64_t limit_;
  bool redis_;
  std::vector<GrowRing<TraceItem>> queues_;  // each stream's records, in order
  size_t buffered_ = 0;
  uint64_t ordinal_ = 0, kept_ = 0;  // records read; records replayed (towards limit_)
  bool ended_ = false;
  std::string error_;
  TraceRecord rec_{};  // the record last read (its key's bytes are gone: rec_id_ stays)
  uint64_t rec_id_ = 0, rec_ordinal_ = 0;
  bool have_rec_ = false;          // rec_ is the next second's first, not yet handed out
  int64_t ts0_ = 0, second_ = -1;  // the first record's timestamp; the second last read
  // Recorded timing: the current second's records of this worker, with their place among all
  // the second's records (their send time waits for the second's count).
  struct Placed {
    size_t stream, place;
    TraceItem item;
  };
  std::vector<Placed> pending_;
};

}  // namespace kv::drive
