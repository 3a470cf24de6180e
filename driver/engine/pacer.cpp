#include "engine/pacer.hpp"

#include <sys/prctl.h>
#include <time.h>

#include <algorithm>
#include <cerrno>

#include "kvbench/clock.hpp"

namespace kv::drive {
namespace {

constexpr int64_t kSliceNs = 50'000'000;  // how often a long sleep looks at stop / abort

inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

}  // namespace

void SpinMargin::observe(int64_t oversleep_ns) noexcept {
  samples_[count_ % samples_.size()] = std::max<int64_t>(oversleep_ns, 0);
  ++count_;
  if (count_ % 8 != 0) return;
  std::array<int64_t, 64> sorted = samples_;
  const size_t n = std::min(count_, sorted.size());
  const size_t k = n * 9 / 10;  // the 90th percentile of what is there
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<ptrdiff_t>(k),
                   sorted.begin() + static_cast<ptrdiff_t>(n));
  margin_ns_ = std::clamp<int64_t>(sorted[k] + 2'000, kMinNs, kMaxNs);
}

Pacer::Pacer(const std::atomic<bool>& stop, const std::atomic<bool>& abort)
    : stop_(stop), abort_(abort) {
  // The default 50 µs slack lets the kernel fire the timer up to 50 µs late to batch wake-ups.
  // Failing to lower it only makes the margin adapt to a later wake-up.
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
}

bool Pacer::stopped(int64_t now, int64_t end_ns) const noexcept {
  if (stop_.load(std::memory_order_relaxed)) return true;
  if (!abort_.load(std::memory_order_relaxed)) return false;
  return !abort_may_be_duration_end(true, end_ns, now);
}

bool Pacer::sleep_until(int64_t deadline_ns, int64_t end_ns) {
  for (;;) {
    const int64_t now = steady_ns();
    if (stopped(now, end_ns)) return false;
    if (now >= deadline_ns) return true;
    const int64_t t = std::min(deadline_ns, now + kSliceNs);
    timespec ts{static_cast<time_t>(t / 1'000'000'000), static_cast<long>(t % 1'000'000'000)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr);  // EINTR: loop again
  }
}

bool Pacer::wait_until(int64_t intended_ns, int64_t end_ns, uint64_t* spin_ns) {
  if (end_ns <= intended_ns) {
    sleep_until(end_ns, end_ns);
    return false;
  }
  int64_t now = steady_ns();
  if (now >= intended_ns) return true;  // late already: send at once
  const int64_t wake_ns = intended_ns - margin_.margin_ns();
  if (now < wake_ns) {
    if (!sleep_until(wake_ns, end_ns)) return false;
    now = steady_ns();
    margin_.observe(now - wake_ns);
  }
  if (now >= intended_ns) return true;  // woke late: nothing to spin for
  const int64_t spin_start = now;
  while ((now = steady_ns()) < intended_ns) cpu_relax();
  *spin_ns += static_cast<uint64_t>(now - spin_start);
  return true;
}

}  // namespace kv::drive
