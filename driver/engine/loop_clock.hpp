// The measurement's clock and timer seam: every time run_phase and its workers read (the
// monotonic clock, and the wall clock the rows are cut on), every wait of the collector and
// every sleep of a worker's loop go through a LoopClock. system_loop_clock() is the machine's
// (CLOCK_MONOTONIC, CLOCK_REALTIME, Asio's timer); a test's simulated clock
// (tests/support/sim_clock.hpp) runs a whole phase in virtual time, its threads in lockstep.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

#include "kvbench/time_base.hpp"

namespace boost::asio {
class io_context;
}

namespace kv::drive {

class SpinMargin;

// How one worker's loop waits (LoopClock::waiter); used by that worker's thread only.
class LoopWaiter {
 public:
  virtual ~LoopWaiter() = default;
  // Runs what is ready on the worker's io_context (at least one handler), or sleeps until
  // `until` (the monotonic clock, ns), whichever comes first.
  virtual void wait(int64_t until) = 0;
  // Close to a send time due at `due`: runs what is ready without sleeping; the number of
  // handlers run (0: the caller spun).
  virtual size_t spin(int64_t due) = 0;
  // Runs `fn` on this worker's loop at `at` (a scripted transport's timed events).
  virtual void at(int64_t at, std::function<void()> fn) = 0;
};

class LoopClock : public ClockSource {
 public:
  // The collector's wait (the caller holds `lock`, on `cv`'s mutex): until the monotonic
  // clock reaches `deadline_ns` or done() is true (checked when `cv` is notified); returns
  // done().
  virtual bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                          int64_t deadline_ns, const std::function<bool()>& done) = 0;
  // `n` worker threads are about to start; each calls worker_done() as its last step (after it
  // told the collector).
  virtual void workers_begin(size_t /*n*/) {}
  virtual void worker_done() {}
  // A worker's waiter over its io_context; in rate mode each sleep's lateness goes to
  // `lateness` (SpinMargin::observe), when not null.
  virtual std::unique_ptr<LoopWaiter> waiter(boost::asio::io_context& io, SpinMargin* lateness) = 0;
};

// The machine's clocks and Asio's steady timer (a static object; thread-safe).
LoopClock& system_loop_clock();

}  // namespace kv::drive
