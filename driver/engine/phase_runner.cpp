#include "engine/phase_runner.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <fstream>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "engine/loop/event_worker.hpp"
#include "engine/second_cutter.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/time_base.hpp"
#include "kvbench/units.hpp"

namespace kv::drive {
namespace {

struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
};

double to_s(const timeval& tv) {
  return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

double thread_cpu_s(std::thread& t) {
  clockid_t id{};
  timespec ts{};
  if (pthread_getcpuclockid(t.native_handle(), &id) != 0 || clock_gettime(id, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A thread's time on a CPU and its time runnable but waiting for one (ns, from
// /proc/self/task/TID/schedstat); nullopt when unreadable.
struct SchedStat {
  uint64_t on_cpu = 0, waiting = 0;
};
std::optional<SchedStat> thread_schedstat(pid_t tid) {
  if (tid <= 0) return std::nullopt;
  std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/schedstat");
  SchedStat s;
  if (!(f >> s.on_cpu >> s.waiting)) return std::nullopt;
  return s;
}

// Client CPU bookkeeping between two collections.
class CpuMeter {
 public:
  explicit CpuMeter(size_t workers)
      : last_thread_(workers, 0.0), last_sched_(workers, std::nullopt) {
    read(user_, system_);
  }
  // wanted: the busiest worker's time running or runnable (waiting for a CPU), less its
  // spinning: a thread starved of CPU by a loaded machine is a client limit too. run_delay_us:
  // the longest any worker waited for a CPU since the last call (-1 when none could be read).
  // A worker that has ended is read from `finals`, what it read of itself as it ended.
  void sample_wanted(const std::vector<std::atomic<pid_t>>& tids,
                     const std::vector<std::optional<SchedStat>>& finals, double interval_s,
                     const std::vector<uint64_t>& spin_ns, double* wanted, int64_t* run_delay_us) {
    *wanted = 0;
    *run_delay_us = -1;
    for (size_t i = 0; i < tids.size() && i < last_sched_.size(); ++i) {
      std::optional<SchedStat> now = thread_schedstat(tids[i].load());
      if (!now && i < finals.size()) now = finals[i];
      if (!now) continue;
      // The workers are this phase's threads: their counts began at 0 when they did.
      const uint64_t waited_before = last_sched_[i] ? last_sched_[i]->waiting : 0;
      *run_delay_us =
          std::max(*run_delay_us, static_cast<int64_t>((now->waiting - waited_before) / 1000));
      if (const auto& last = last_sched_[i]) {
        const uint64_t wanted_ns = now->on_cpu + now->waiting - last->on_cpu - last->waiting;
        *wanted = std::max(
            *wanted,
            thread_wanted_fraction(wanted_ns, i < spin_ns.size() ? spin_ns[i] : 0, interval_s));
      }
      last_sched_[i] = now;
    }
  }
  // busiest: the busiest worker's CPU less the time it spent spinning for a send time.
  void sample(std::vector<std::thread>& threads, double interval_s,
              const std::vector<uint64_t>& spin_ns, double* user_s, double* system_s,
              double* busiest) {
    double u = 0, s = 0;
    read(u, s);
    *user_s = u - user_;
    *system_s = s - system_;
    user_ = u;
    system_ = s;
    *busiest = 0;
    for (size_t i = 0; i < threads.size() && i < last_thread_.size(); ++i) {
      double now = thread_cpu_s(threads[i]);
      double spin = i < spin_ns.size() ? static_cast<double>(spin_ns[i]) / 1e9 : 0;
      if (interval_s > 0)
        *busiest = std::max(*busiest, std::max(0.0, now - last_thread_[i] - spin) / interval_s);
      last_thread_[i] = now;
    }
  }

 private:
  static void read(double& u, double& s) {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    u = to_s(ru.ru_utime);
    s = to_s(ru.ru_stime);
  }
  double user_ = 0, system_ = 0;
  std::vector<double> last_thread_;
  std::vector<std::optional<SchedStat>> last_sched_;
};

// Hands rows to the sink on a thread of its own, in order. The queue holds small values (a
// row's figures and its histograms' non-empty buckets, typically a few KB), so a results file
// locked for minutes costs megabytes at most.
class SinkThread {
 public:
  explicit SinkThread(const std::function<void(const SecondReport&)>& sink)
      : sink_(sink), thread_([this] { loop(); }) {}
  ~SinkThread() { close(); }
  void push(SecondReport r) {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(r));
    cv_.notify_one();
  }
  bool failed() const { return failed_.load(); }
  // Waits until every queued row was handed over (or the sink failed), then rethrows its error.
  void close() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      closing_ = true;
      cv_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return closing_ || !queue_.empty(); });
      if (queue_.empty()) return;
      SecondReport r = std::move(queue_.front());
      queue_.pop_front();
      lock.unlock();
      try {
        sink_(r);
      } catch (...) {
        error_ = std::current_exception();
        failed_ = true;
        return;
      }
      lock.lock();
    }
  }

  const std::function<void(const SecondReport&)>& sink_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<SecondReport> queue_;
  bool closing_ = false;
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace

double thread_wanted_fraction(uint64_t wanted_delta_ns, uint64_t spin_ns, double interval_s) {
  if (!(interval_s > 0) || wanted_delta_ns <= spin_ns) return 0;
  return std::min(1.0, static_cast<double>(wanted_delta_ns - spin_ns) / 1e9 / interval_s);
}

PhaseResult run_phase(const PhasePlan& plan, const WorkloadSpec& w,
                      std::vector<std::unique_ptr<StoreClient>>& clients, const ValueTable& values,
                      const std::atomic<bool>& stop, const std::function<void(int64_t)>& on_start,
                      const std::function<void(const SecondReport&)>& on_second, LoopClock& clock) {
  const size_t conns = static_cast<size_t>(w.connections);
  const size_t n = clients.size() / conns;  // workers
  std::vector<std::unique_ptr<StatsSlot>> slots;
  for (size_t i = 0; i < n; ++i) slots.push_back(std::make_unique<StatsSlot>(plan.rate > 0));
  // A memcached pool's servers, each counted apart (pool_server_seconds).
  const std::vector<std::string> pool =
      clients.empty() ? std::vector<std::string>{} : clients.front()->pool_servers();
  for (auto& s : slots) s->set_pool_servers(pool.size());
  std::vector<std::array<uint64_t, kPoolCounts>> pool_seen(pool.size());
  Shared shared;
  shared.running = static_cast<int>(n);
  std::atomic<bool> abort{false};
  // The ops this phase sends get a row every second, even one in which nothing completed.
  const bool sends_sets =
      plan.kind == PhaseKind::load || (plan.kind == PhaseKind::mixed && w.ratio_sets > 0);
  const bool sends_gets =
      plan.kind == PhaseKind::read || (plan.kind == PhaseKind::mixed && w.ratio_gets > 0);

  SecondCutter cutter(clock, plan.warmup_us);
  const int64_t start_ns = cutter.start_ns();
  PhaseResult result;
  result.started_ts_us = cutter.started_ts_us();
  on_start(result.started_ts_us);
  // The duration is the monotonic clock's, as the workers' end (phase_end_ns): a wall clock
  // stepped or slewed meanwhile moves the rows' times, never the phase's length.
  const int64_t duration_end_ns =
      plan.duration_us > 0 ? start_ns + plan.duration_us * 1000 : INT64_MAX;

  std::vector<std::thread> threads;
  std::vector<std::atomic<pid_t>> tids(n);
  std::vector<std::optional<SchedStat>> finals(n);  // each worker's own schedstat as it ended
  clock.workers_begin(n);
  for (size_t t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      tids[t].store(::gettid());
      std::span<const std::unique_ptr<StoreClient>> mine(clients.data() + t * conns, conns);
      // Workers are numbered across every process of a --processes group, so their key and
      // request shares (and rate schedules) add up to the whole workload.
      // With --segment, across every segment of the run the same way.
      const auto procs = static_cast<size_t>(w.process_count);
      const bool segment = w.worker_total > 0;
      const auto first =
          segment ? static_cast<size_t>(w.worker_first) : static_cast<size_t>(w.process_index) * n;
      const auto count = segment ? static_cast<size_t>(w.worker_total) : procs * n;
      run_event_worker(WorkerContext{plan, w, values, mine, *slots[t], first + t, count, start_ns,
                                     stop, abort, clock});
      const std::optional<SchedStat> last = thread_schedstat(::gettid());
      {
        std::lock_guard<std::mutex> lock(shared.mu);
        finals[t] = last;
        --shared.running;
        shared.cv.notify_all();
      }
      clock.worker_done();
    });
  }

  SinkThread sink(on_second);
  CpuMeter cpu(n);
  std::vector<uint64_t> spin_seen(n, 0);
  const bool redirects = !clients.empty() && clients.front()->follows_redirects();
  uint64_t moved_seen = 0, asked_seen = 0;
  IntervalStats second;
  int64_t last_answer_ns = start_ns;  // the end of the latest row with an answer (monotonic)
  uint64_t failed_since_answer = 0;
  enum class Why { none, max_errors, gave_up } why = Why::none;
  for (bool done = false; !done;) {
    // The row ends at the next whole second, or when the last worker is done. The phase's
    // duration ends inside a row: the collector wakes then to stop the workers, and the row
    // goes on until they are done (with the requests that were in flight).
    const int64_t row_end_ts = cutter.row_end_ts_us();
    for (;;) {
      const int64_t row_end_ns = cutter.to_steady_ns(row_end_ts);
      const bool duration_first = !abort && duration_end_ns < row_end_ns;
      std::unique_lock<std::mutex> lock(shared.mu);
      done = clock.wait_until(lock, shared.cv, duration_first ? duration_end_ns : row_end_ns,
                              [&] { return shared.running == 0; });
      if (done || !duration_first) break;
      abort = true;
    }
    SecondCutter::Cut cut = cutter.cut(done);
    const int64_t now_ns = clock.steady_ns();
    for (auto& s : slots) s->drain_into(second);
    for (const RowFrame& f : cut.empty) {
      SecondReport empty;
      empty.ts_us = f.ts_us;
      empty.interval_us = f.interval_us;
      empty.warmup = f.warmup;
      empty.by_op[0] = summarize(OpStats(), sends_sets);
      empty.by_op[1] = summarize(OpStats(), sends_gets);
      empty.clock_offset_us = f.clock_offset_us;
      for (const std::string& server : pool) empty.pool.push_back({server, {}});
      sink.push(std::move(empty));
    }
    SecondReport report;
    report.ts_us = cut.row.ts_us;
    report.interval_us = cut.row.interval_us;
    report.warmup = cut.row.warmup;
    report.by_op[0] = summarize(second[OpType::set], sends_sets);
    report.by_op[1] = summarize(second[OpType::get], sends_gets);
    report.clock_offset_us = cut.row.clock_offset_us;
    std::vector<uint64_t> spin_delta(n, 0);
    for (size_t i = 0; i < n; ++i) {
      uint64_t total = slots[i]->spin_ns_total();
      spin_delta[i] = total - spin_seen[i];
      spin_seen[i] = total;
      report.spin_us += static_cast<int64_t>(spin_delta[i] / 1000);
    }
    for (const auto& s : slots)
      for (WorkerNote& note : s->take_notes())
        if (std::find(report.notes.begin(), report.notes.end(), note) == report.notes.end())
          report.notes.push_back(std::move(note));
    if (redirects) {
      uint64_t moved = 0, asked = 0;
      for (const auto& s : slots) {
        moved += s->moved_total();
        asked += s->asked_total();
      }
      report.moved = static_cast<int64_t>(moved - std::exchange(moved_seen, moved));
      report.asked = static_cast<int64_t>(asked - std::exchange(asked_seen, asked));
    }
    for (size_t i = 0; i < pool.size(); ++i) {
      SecondReport::PoolSecond& row = report.pool.emplace_back();
      row.server = pool[i];
      for (size_t c = 0; c < kPoolCounts; ++c) {
        uint64_t total = 0;
        for (const auto& s : slots) total += s->pool_total(i, static_cast<PoolCount>(c));
        row.n[c] = static_cast<int64_t>(total - std::exchange(pool_seen[i][c], total));
      }
    }
    cpu.sample(threads, static_cast<double>(report.interval_us) / 1e6, spin_delta,
               &report.cpu_user_s, &report.cpu_system_s, &report.busiest_thread_cpu);
    std::vector<std::optional<SchedStat>> ended;
    {
      std::lock_guard<std::mutex> lock(shared.mu);
      ended = finals;
    }
    cpu.sample_wanted(tids, ended, static_cast<double>(report.interval_us) / 1e6, spin_delta,
                      &report.busiest_thread_wanted, &report.run_delay_us);
    if (!report.warmup) result.totals.merge(second);
    result.ops += report.ops();
    result.failed += report.failed();
    if (report.ok() > 0) {
      last_answer_ns = cutter.to_steady_ns(cut.row.end_ts_us());
      failed_since_answer = 0;
    } else {
      failed_since_answer += report.failed();
    }
    sink.push(std::move(report));
    second.reset();
    if (sink.failed() && !abort) abort = true;  // nowhere to write: stop the workers
    if (why == Why::none && plan.max_errors > 0 && result.failed >= plan.max_errors) {
      why = Why::max_errors;
      abort = true;
    }
    if (why == Why::none && plan.give_up_us > 0 && failed_since_answer > 0 &&
        now_ns - last_answer_ns >= plan.give_up_us * 1000) {
      why = Why::gave_up;
      abort = true;
    }
    if (now_ns >= duration_end_ns) abort = true;  // woken late, past the end
  }
  for (auto& t : threads) t.join();
  result.ended_ts_us = cutter.row_start_ts_us();
  sink.close();
  sink.rethrow();
  if (why == Why::max_errors) {
    // The count includes what completed after the limit was passed, so it is the table's figure.
    result.status = RunStatus::failed;
    result.error = std::to_string(result.failed) + " requests failed (--max-errors " +
                   std::to_string(plan.max_errors) + ")";
  } else if (why == Why::gave_up) {
    result.status = RunStatus::failed;
    result.error = "no request was answered for " + format_duration_us(plan.give_up_us) + " (" +
                   std::to_string(failed_since_answer) +
                   " failed meanwhile): the store looks down; gave up (--give-up-after)";
  } else if (result.ops > 0 && result.failed == result.ops) {
    result.status = RunStatus::failed;
    result.error = "every request failed (" + std::to_string(result.failed) + " of " +
                   std::to_string(result.ops) + ")";
  }
  if (result.status != RunStatus::failed && stop.load()) result.status = RunStatus::interrupted;
  return result;
}

}  // namespace kv::drive
