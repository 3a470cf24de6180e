#include "engine/loop_clock.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>

#include "engine/pacer.hpp"
#include "kvbench/clock.hpp"

namespace kv::drive {
namespace {

using boost::system::error_code;

std::chrono::steady_clock::time_point steady_point(int64_t ns) {
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(ns));
}

// One Asio steady timer, re-armed only when a wait needs an earlier wake-up than the one
// pending: a loop that wakes for I/O keeps its timer.
class SystemWaiter final : public LoopWaiter {
 public:
  SystemWaiter(boost::asio::io_context& io, ClockSource& clock, SpinMargin* lateness)
      : io_(io), clock_(clock), lateness_(lateness), timer_(io) {}

  void wait(int64_t until) override {
    arm(until);
    io_.run_one();
  }
  size_t spin(int64_t /*due*/) override { return io_.poll(); }
  void at(int64_t at, std::function<void()> fn) override {
    auto t = std::make_shared<boost::asio::steady_timer>(io_, steady_point(at));
    t->async_wait([t, fn = std::move(fn)](const error_code& ec) {
      if (!ec) fn();
    });
  }

 private:
  void arm(int64_t at) {
    if (armed_ && armed_at_ <= at) return;
    armed_ = true;
    armed_at_ = at;
    timer_.expires_at(steady_point(at));
    timer_.async_wait([this, g = ++gen_](const error_code& ec) {
      if (g != gen_ || ec) return;
      armed_ = false;
      if (lateness_ != nullptr) lateness_->observe(clock_.steady_ns() - armed_at_);
    });
  }

  boost::asio::io_context& io_;
  ClockSource& clock_;
  SpinMargin* lateness_;
  boost::asio::steady_timer timer_;
  bool armed_ = false;
  int64_t armed_at_ = 0;
  uint64_t gen_ = 0;
};

class SystemLoopClock final : public LoopClock {
 public:
  int64_t wall_us() override { return system_clock_source().wall_us(); }
  int64_t steady_ns() override { return kv::steady_ns(); }
  bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  int64_t deadline_ns, const std::function<bool()>& done) override {
    return cv.wait_until(lock, steady_point(deadline_ns), done);
  }
  std::unique_ptr<LoopWaiter> waiter(boost::asio::io_context& io, SpinMargin* lateness) override {
    return std::make_unique<SystemWaiter>(io, *this, lateness);
  }
};

}  // namespace

LoopClock& system_loop_clock() {
  static SystemLoopClock clock;
  return clock;
}

}  // namespace kv::drive
