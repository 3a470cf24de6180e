#include "engine/second_cutter.hpp"

#include <algorithm>
#include <climits>

namespace kv::drive {

SecondCutter::SecondCutter(ClockSource& source, int64_t warmup_us)
    : base_(source),
      start_ns_(base_.steady_now_ns()),
      started_ts_us_(base_.to_ts_us(start_ns_)),
      warmup_end_ts_(warmup_us <= 0
                         ? INT64_MIN
                         : std::max((started_ts_us_ + warmup_us + 500'000) / 1'000'000 * 1'000'000,
                                    next_multiple_us(started_ts_us_, 1'000'000))),
      row_start_ts_(started_ts_us_) {}

RowFrame SecondCutter::frame(int64_t start, int64_t end) const {
  return RowFrame{start, end - start, in_warmup(end), base_.offset_us()};
}

SecondCutter::Cut SecondCutter::cut(bool last) {
  const int64_t now_ns = base_.steady_now_ns();
  base_.anchor();  // follow a slewed or stepped wall clock, once a second
  Cut c;
  c.now_ts_us = base_.to_ts_us(now_ns);
  int64_t row_end_ts = row_end_ts_us();
  if (last) {
    // The last row ends when the last worker did (never empty: rows are unique by start).
    row_end_ts = std::min(row_end_ts, std::max(c.now_ts_us, row_start_ts_ + 1));
  } else {
    // Woken late past further boundaries: those seconds get their rows too, empty.
    for (int64_t next = next_multiple_us(row_end_ts, 1'000'000); next <= c.now_ts_us;
         next = next_multiple_us(next, 1'000'000)) {
      c.empty.push_back(frame(row_start_ts_, row_end_ts));
      row_start_ts_ = row_end_ts;
      row_end_ts = next;
    }
  }
  c.row = frame(row_start_ts_, row_end_ts);
  row_start_ts_ = row_end_ts;
  return c;
}

}  // namespace kv::drive
