// Rate mode's clock: waits for each request's intended send time without waking late.
// A plain clock_nanosleep wakes 80-110 µs late on the dev VM: the thread's default 50 µs timer
// slack plus the wake-up itself. The pacer sets the slack to 1 ns, sleeps until a margin before
// the send time, then spins the last stretch, and counts the spinning so that the client-bound
// rule can leave it out (the thread had nothing else to do).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
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

// Waits for send times on the calling thread. Not thread-safe: one per worker thread.
class Pacer {
 public:
  // Sets the calling thread's timer slack to 1 ns (prctl), so construct it on the worker thread.
  // stop and abort end a wait early (an abort near the duration's end only past it: see
  // kEndGraceNs); they are checked at least every 50 ms.
  Pacer(const std::atomic<bool>& stop, const std::atomic<bool>& abort);

  // Waits until steady_ns() >= intended_ns: sleeps until the margin before it, then spins. When
  // end_ns <= intended_ns it sleeps until end_ns instead (the phase's wall time ends there; at
  // once if that is past) and returns false; also false when stop or abort turned true. When
  // intended_ns is already past it returns true at once (never spins when late). Returns true
  // when the send time is reached.
  // Spinning time is added to *spin_ns.
  bool wait_until(int64_t intended_ns, int64_t end_ns, uint64_t* spin_ns);

  const SpinMargin& margin() const noexcept { return margin_; }

 private:
  // Ctrl-C, or an abort that is not the duration's end (abort_may_be_duration_end).
  bool stopped(int64_t now, int64_t end_ns) const noexcept;
  // Sleeps until deadline_ns in slices; false if stopped first.
  bool sleep_until(int64_t deadline_ns, int64_t end_ns);

  const std::atomic<bool>& stop_;
  const std::atomic<bool>& abort_;
  SpinMargin margin_;
};

}  // namespace kv::drive
