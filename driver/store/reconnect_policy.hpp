// The one reconnect policy of kvdrive's store clients (Redis and memcached alike):
//  - a request that finds the store gone (refused, unreachable, disabled until a retry) fails
//    after a pause of kStoreGonePauseUs (10 ms), so a worker never spins on a dead store;
//  - attempts to connect again are spaced by a backoff: none for 50 ms after the first failed
//    attempt, then doubling up to ClientOptions::reconnect_backoff_max_us (2 s); a successful
//    connect resets it. A request made while the backoff runs fails after the pause above.
// memcached: libmemcached reconnects by itself on the next request, and a pool must keep
// serving its live servers while one is down, so its client takes only the pause; the spacing
// of its attempts is libmemcached's per-server retry timeout (1 s, set in memcached_client.cpp).
// Not thread-safe: one per client (one worker thread).
#pragma once

#include <cstdint>
#include <functional>

namespace kv::drive {

inline constexpr int64_t kStoreGonePauseUs = 10'000;
inline constexpr int64_t kFirstBackoffUs = 50'000;

class ReconnectPolicy {
 public:
  // `now_us`: a monotonic clock in microseconds (default: the real one); `pause_us`: how the
  // pause is taken (default: nanosleep). Both injectable for tests.
  explicit ReconnectPolicy(int64_t max_backoff_us, std::function<int64_t()> now_us = {},
                           std::function<void(int64_t)> pause_us = {});

  // Whether a connect may be attempted now. False while the backoff runs, after the pause.
  bool may_connect();
  void connected() { backoff_us_ = 0; }
  // A connect attempt (allowed by the latest may_connect) failed: the next one waits for the
  // grown backoff, counted from that may_connect.
  void connect_failed();
  // A request found the store gone: the pause, before the failure is returned.
  void store_gone() const { pause_(kStoreGonePauseUs); }
  int64_t backoff_us() const { return backoff_us_; }

 private:
  int64_t max_backoff_us_;
  std::function<int64_t()> now_;
  std::function<void(int64_t)> pause_;
  int64_t backoff_us_ = 0;
  int64_t next_connect_us_ = 0;
  int64_t checked_us_ = 0;  // when may_connect last looked
};

}  // namespace kv::drive
