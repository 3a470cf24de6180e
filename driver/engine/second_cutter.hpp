// Where the phase runner's rows begin and end: whole seconds of the wall clock, cut on the
// monotonic clock re-anchored to the wall clock at every cut (kvbench/time_base.hpp). Pure
// bookkeeping over a ClockSource, so the cutting is tested with a fake clock and no real time.
#pragma once

#include <cstdint>
#include <vector>

#include "kvbench/time_base.hpp"

namespace kv::drive {

// One row's place in time.
struct RowFrame {
  int64_t ts_us = 0;            // start (the phase's start for the first row, else a whole second)
  int64_t interval_us = 0;      // > 0; 1 s except for the first and the last row
  bool warmup = false;          // the row ends at or before the warm-up's end
  int64_t clock_offset_us = 0;  // wall − monotonic at the cut (TimeBase::offset_us)
  int64_t end_ts_us() const { return ts_us + interval_us; }
};

// Not thread-safe: the collector's thread only.
class SecondCutter {
 public:
  // Reads the clocks now: that is the phase's start. The warm-up ends on the whole second
  // nearest to start + warmup_us and covers at least the first, partial row; warmup_us <= 0:
  // no warm-up.
  SecondCutter(ClockSource& source, int64_t warmup_us);

  int64_t start_ns() const { return start_ns_; }  // the start on the monotonic clock
  int64_t started_ts_us() const { return started_ts_us_; }
  // The end of the row now being collected: the first whole second after its start.
  int64_t row_end_ts_us() const { return next_multiple_us(row_start_ts_, 1'000'000); }
  // The start of the row now being collected; after the last cut, the phase's end.
  int64_t row_start_ts_us() const { return row_start_ts_; }
  // A wall time as an instant of the source's monotonic clock (what the collector waits for).
  int64_t to_steady_ns(int64_t ts_us) const { return base_.to_steady_ns(ts_us); }

  struct Cut {
    // Whole seconds that passed while the collector was late (kvdrive itself stalled), oldest
    // first: rows with nothing in them.
    std::vector<RowFrame> empty;
    RowFrame row;       // the row what was collected since the last cut goes into
    int64_t now_ts_us;  // the wall time of the cut
  };
  // The collector woke: reads the monotonic clock, re-anchors (following a slewed or stepped
  // wall clock), and cuts. Not `last`: the row ends at its whole second, and whole seconds
  // further before now each become an empty row; what was collected goes into the last whole
  // second before now. `last` (the last worker is done): the row ends now, or at its whole
  // second if that is earlier, and is never empty (at least 1 µs: rows are unique by start).
  Cut cut(bool last);

 private:
  bool in_warmup(int64_t row_end_ts) const { return row_end_ts <= warmup_end_ts_; }
  RowFrame frame(int64_t start, int64_t end) const;

  TimeBase base_;
  int64_t start_ns_;
  int64_t started_ts_us_;
  int64_t warmup_end_ts_;
  int64_t row_start_ts_;
};

}  // namespace kv::drive
