// Clock offset to a kvmon from time request/response exchanges (NTP's minimum-delay filter):
// the exchange with the lowest round trip bounds the error best. Pure; not thread-safe.
#pragma once

#include <cstdint>
#include <optional>

namespace kv::drive {

struct ClockExchange {
  int64_t sent_ts_us = 0;      // our wall clock when the request left
  int64_t server_ts_us = 0;    // kvmon's wall clock in its reply
  int64_t received_ts_us = 0;  // our wall clock when the reply arrived
  int64_t rtt_us = 0;          // round trip measured on our monotonic clock
};

struct ClockEstimate {
  // Added to kvmon's times to get ours: midpoint of the exchange minus kvmon's time.
  int64_t offset_us = 0;
  int64_t uncertainty_us = 0;  // half the round trip: the true offset is within ± this
  int64_t rtt_us = 0;
};

inline constexpr int kClockExchanges = 8;

// A time a kvmon may send (wall clock, µs since the epoch): 2000-01-01 to 2200-01-01. Anything
// else is a broken or hostile peer (INT64_MAX as an offset wrote rows at ts ≈ -9.2e18), and
// inside the range no sum of a time and an offset overflows.
inline constexpr int64_t kMinPlausibleTsUs = 946'684'800'000'000;
inline constexpr int64_t kMaxPlausibleTsUs = 7'258'118'400'000'000;
inline bool plausible_ts_us(int64_t ts) {
  return ts >= kMinPlausibleTsUs && ts <= kMaxPlausibleTsUs;
}

class ClockSync {
 public:
  void add(const ClockExchange& e) {
    ++count_;
    if (best_ && e.rtt_us >= best_->rtt_us) return;
    int64_t mid = e.sent_ts_us + (e.received_ts_us - e.sent_ts_us) / 2;
    best_ = ClockEstimate{mid - e.server_ts_us, (e.rtt_us + 1) / 2, e.rtt_us};
  }
  int count() const { return count_; }
  bool done() const { return count_ >= kClockExchanges; }
  const std::optional<ClockEstimate>& best() const { return best_; }
  void reset() {
    count_ = 0;
    best_.reset();
  }

 private:
  int count_ = 0;
  std::optional<ClockEstimate> best_;
};

}  // namespace kv::drive
