#include "store/reconnect_policy.hpp"

#include <time.h>

#include <algorithm>

#include "kvbench/clock.hpp"

namespace kv::drive {

ReconnectPolicy::ReconnectPolicy(int64_t max_backoff_us, std::function<int64_t()> now_us,
                                 std::function<void(int64_t)> pause_us)
    : max_backoff_us_(max_backoff_us),
      now_(now_us ? std::move(now_us) : [] { return steady_us(); }),
      pause_(pause_us ? std::move(pause_us) : [](int64_t us) {
        timespec pause{static_cast<time_t>(us / 1'000'000),
                       static_cast<long>(us % 1'000'000) * 1000};
        nanosleep(&pause, nullptr);
      }) {}

bool ReconnectPolicy::may_connect() {
  checked_us_ = now_();
  if (checked_us_ >= next_connect_us_) return true;
  store_gone();  // don't spin while waiting for the server to return
  return false;
}

void ReconnectPolicy::connect_failed() {
  backoff_us_ = backoff_us_ == 0 ? kFirstBackoffUs : std::min(backoff_us_ * 2, max_backoff_us_);
  next_connect_us_ = checked_us_ + backoff_us_;  // from when the attempt began
}

}  // namespace kv::drive
