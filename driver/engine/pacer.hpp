// Rate mode's clock: how a worker waits for each request's intended send time without waking
// late, and what that may cost. A plain clock_nanosleep wakes 80-110 µs late on the dev VM: the
// thread's default 50 µs timer slack plus the wake-up itself. The event loop sets the slack to
// 1 ns, sleeps until a margin before the send time (SpinMargin), then spins the last stretch
// serving I/O, within a CPU budget (SpinBudget), and counts the spinning so that the
// client-bound rule can leave it out (the thread had nothing else to do).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

namespace kv::drive {

// How long before a send time to stop sleeping and start spinning: the 90th percentile of the
// last 64 measured oversleeps (how much later than asked a sleep woke), plus 2 µs, kept within
// [kMinNs, kMaxNs]. Adaptive, not fixed, because the wake-up lateness belongs to the machine and
// its load (~30 µs on the dev VM with 1 ns slack, a few µs on bare metal, more under load): a
// fixed stretch either spins for nothing or wakes late. p90 puts ~9 sends in 10 on time at a
// spin cost of about (p90 - typical oversleep) per send. The cap bounds what a badly loaded
// machine can cost: at most kMaxNs of spin per send. Not thread-safe: one per worker.
class SpinMargin {
 public:
  static constexpr int64_t kInitialNs = 50'000;
  static constexpr int64_t kMinNs = 2'000;
  static constexpr int64_t kMaxNs = 250'000;

  int64_t margin_ns() const noexcept { return margin_ns_; }
  // One sleep's lateness (>= 0; negative values count as 0). Updates the margin every 8th call.
  void observe(int64_t oversleep_ns) noexcept;

 private:
  std::array<int64_t, 64> samples_{};
  size_t count_ = 0;  // samples observed in all
  int64_t margin_ns_ = kInitialNs;
};

// The collector's abort at a phase's duration end comes within milliseconds of the worker's
// end_ns (the collector wakes on its wall-clock time base, the worker counts on the steady
// clock): in rate mode the requests due before end_ns are still sent then (a backlog after a
// stall included, late, their latency from when they were due), for up to `late_ns` past the
// end (the event loop gives them the request timeout, at least kEndGraceNs); what is still
// unsent then is counted as dropped (User::drop_due). Any other abort (max errors, give-up, a
// failed sink) outside that window stops at once.
inline constexpr int64_t kEndGraceNs = 100'000'000;
// True when an abort seen at `now` may be the duration's end of a rate-mode phase ending at
// end_ns (INT64_MAX: no duration), so that sends due before end_ns still go out.
inline bool abort_may_be_duration_end(bool rate_mode, int64_t end_ns, int64_t now,
                                      int64_t late_ns = kEndGraceNs) {
  return rate_mode && end_ns != INT64_MAX && now >= end_ns - kEndGraceNs &&
         now < end_ns + std::max(late_ns, kEndGraceNs);
}

// What spinning may cost: a token bucket of spin time that fills at `fraction` of the wall
// time (--spin-budget, a share of one core per worker thread) up to kBurstNs. The margin a
// worker spins for is cut to what the bucket holds, so over any window a worker spins at most
// fraction x window + kBurstNs (plus one spin's overshoot when the thread is descheduled in
// it): a loaded host, where the oversleeps and with them the margin grow exactly when CPU is
// scarce, gets later sends (slip, reported as client-send time) instead of a spinning core.
// fraction >= 1: no bound; 0: never spin. Not thread-safe: one per worker.
class SpinBudget {
 public:
  static constexpr int64_t kBurstNs = 1'000'000;  // above SpinMargin::kMaxNs: one full spin
  static constexpr double kDefaultFraction = 0.10;

  explicit SpinBudget(double fraction = kDefaultFraction) noexcept;
  // The margin to spin for at `now`: `wanted_ns`, cut to the spin time the bucket holds.
  int64_t margin_ns(int64_t now, int64_t wanted_ns) noexcept;
  // Spinning that took `ns` of wall time (a descheduled spinner pays for the time it lost).
  void spent(int64_t ns) noexcept;

 private:
  double fraction_;
  double tokens_ns_;      // may go below 0, down to -kBurstNs, after a long spin
  int64_t last_ns_ = -1;  // when the bucket was last filled; -1: not yet
};

}  // namespace kv::drive
