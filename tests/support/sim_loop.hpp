// A whole phase (run_phase) in process and in virtual time: SimClock is a LoopClock whose time
// moves only when every thread of the phase (the collector and each worker) waits, to the
// earliest time one of them waits for; SimStore is a memcached-text store in process whose
// replies, stalls, refusals and closes a test scripts; SimStore::transports() gives the
// EventClients the FakeTransports that reach it (EventClient::set_transports). No socket, no
// real sleep: a 10 s phase runs in milliseconds, and its counts and times are exact.
//
// Contract:
// - SimClock: the monotonic clock starts at 1 s, the wall clock at `wall_start_us`; a test may
//   step the wall clock or slew it from a given virtual time (step_wall_at, slew_at). Virtual
//   time never moves while any thread of the phase is running: workers and the collector run in
//   lockstep, so a row is cut exactly where the clock says.
// - SimStore speaks memcached text (set, get; one key per get): STORED, VALUE ... END / END.
//   A request's reply leaves `service` after the store got the request, never before the reply
//   to the request before it on its connection. Counters as memcached's: cmd_get, cmd_set,
//   get_hits, connections. One key space, shared by every connection (thread-safe).
// - Script (set before the phase; read by the worker threads): service(conn, n) gives the n-th
//   request (0-based) on connection `conn` (0-based, in connect order) its service time, or
//   kNever (never answered); refuse_connects, or refuse_server (the connects to that server of
//   a pool); close_after (the store closes each connection after answering that many requests).
// - A pool: each server of the target (by index) is a SimStore server of its own key space
//   share; by_server counts the requests each got.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "engine/loop/transport.hpp"
#include "engine/loop_clock.hpp"

namespace kv::test {

class SimClock final : public drive::LoopClock {
 public:
  explicit SimClock(int64_t wall_start_us = 1'700'000'000'000'000);

  int64_t wall_us() override;
  int64_t steady_ns() override { return now_.load(std::memory_order_acquire); }
  bool wait_until(std::unique_lock<std::mutex>& lock, std::condition_variable& cv,
                  int64_t deadline_ns, const std::function<bool()>& done) override;
  void workers_begin(size_t n) override;
  void worker_done() override;
  std::unique_ptr<drive::LoopWaiter> waiter(boost::asio::io_context& io,
                                            drive::SpinMargin* lateness) override;

  // From virtual time `at_ns` on, the wall clock is `us` further (a step; may be negative) / runs
  // `rate` faster than the monotonic clock (a slew: 0.0005 is 500 µs/s).
  void step_wall_at(int64_t at_ns, int64_t us);
  void slew_at(int64_t at_ns, double rate);

  // A worker's sleep until `until`: returns once virtual time reached it.
  void sleep_until(int64_t until);

 private:
  void advance();  // under mu_: every participant waits; time moves to the earliest deadline
  std::mutex mu_;
  std::condition_variable cv_;
  std::atomic<int64_t> now_{1'000'000'000};
  const int64_t wall_start_us_;
  size_t participants_ = 1;  // the collector, and the workers running
  size_t blocked_ = 0;
  std::multiset<int64_t> deadlines_;
  bool done_dirty_ = false;  // a worker ended since the collector last looked
  uint64_t done_epoch_ = 0;
  struct Step {
    int64_t at_ns;
    int64_t us;
    double rate;  // a slew from at_ns (0: a step)
  };
  std::vector<Step> wall_steps_;  // set before the phase
};

class SimStore {
 public:
  static constexpr int64_t kNever = -1;
  std::function<int64_t(size_t conn, uint64_t n)> service = [](size_t, uint64_t) {
    return int64_t{100'000};
  };
  int64_t connect_ns = 50'000;
  bool refuse_connects = false;
  int refuse_server = -1;    // a pool's server (index) whose connects are refused
  uint64_t close_after = 0;  // 0: never

  std::atomic<uint64_t> cmd_get{0}, cmd_set{0}, get_hits{0}, connections{0}, refused{0};
  std::array<std::atomic<uint64_t>, 4> by_server{};

  // The transports of a client's links (EventClient::set_transports); `clock` is the phase's.
  std::shared_ptr<drive::loop::TransportFactory> transports(SimClock& clock);

  // The store's side of one request to `server` (thread-safe): its reply.
  std::string handle(size_t server, bool is_set, const std::string& key);
  size_t connect();  // a new connection's number

 private:
  std::mutex mu_;
  std::unordered_set<std::string> keys_;
  std::atomic<size_t> next_conn_{0};
};

}  // namespace kv::test
