#include "engine/phase_runner.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
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
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "engine/loop/event_client.hpp"
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

double to_s(const timespec& ts) {
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// A clock's reading in seconds; 0 where it cannot be read.
double clock_s(clockid_t id) {
  timespec ts{};
  return clock_gettime(id, &ts) == 0 ? to_s(ts) : 0;
}

double thread_cpu_s(std::thread& t) {
  clockid_t id{};
  return pthread_getcpuclockid(t.native_handle(), &id) == 0 ? clock_s(id) : 0;
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

// Client CPU bookkeeping between two collections. A thread's fractions are of the time between
// the two readings, not of the row's length: the collector can wake well after a row ends (on a
// loaded machine, 100 ms and more), and the thread's CPU since the row's end would otherwise be
// divided by the row's length alone (a 10 ms first row read 200 ms late showed "2,341 % of a
// core").
class CpuMeter {
 public:
  // Each worker's CPU so far is its baseline: what a worker did before the phase began (under
  // TSan, setting up its ring and buffers took it past 100 % of the first row) is not the row's.
  // The clock is read next to the threads' clocks, so that a collector preempted in between does
  // not stretch one window and not the other.
  CpuMeter(std::vector<std::thread>& workers, LoopClock& clock)
      : clock_(clock), last_sched_(workers.size(), std::nullopt) {
    read(user_, system_);
    last_ns_ = clock_.steady_ns();
    for (std::thread& t : workers) last_thread_.push_back(thread_cpu_s(t));
  }
  // wanted: the busiest worker's time running or runnable (waiting for a CPU), less its
  // spinning: a thread starved of CPU by a loaded machine is a client limit too. run_delay_us:
  // the longest any worker waited for a CPU since the last call (-1 when none could be read).
  // A worker that has ended is read from `finals`, what it read of itself as it ended.
  void sample_wanted(const std::vector<std::atomic<pid_t>>& tids,
                     const std::vector<std::optional<SchedStat>>& finals,
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
            thread_wanted_fraction(wanted_ns, i < spin_ns.size() ? spin_ns[i] : 0, interval_s_));
      }
      last_sched_[i] = now;
    }
  }
  // busiest: the busiest worker's CPU less the time it spent spinning for a send time. A worker
  // that has ended is read from `final_cpu_s()`, its own CPU clock as it ended (0: running),
  // taken after the live readings: an ended thread's handle reads the caller's own clock (glibc
  // clears its tid, and a CPU clock of tid 0 is the calling thread's), so what it gave is
  // replaced. Call before sample_wanted(), which uses the interval this one measured.
  void sample(std::vector<std::thread>& threads,
              const std::function<std::vector<double>()>& final_cpu_s,
              const std::vector<uint64_t>& spin_ns, double* user_s, double* system_s,
              double* busiest) {
    double u = 0, s = 0;
    read(u, s);
    *user_s = u - user_;
    *system_s = s - system_;
    user_ = u;
    system_ = s;
    *busiest = 0;
    const int64_t now_ns = clock_.steady_ns();
    const int64_t d = now_ns - std::exchange(last_ns_, now_ns);
    interval_s_ = d > 0 ? static_cast<double>(d) / 1e9 : 0;
    live_.clear();
    for (std::thread& t : threads) live_.push_back(thread_cpu_s(t));
    const std::vector<double> ended = final_cpu_s();
    for (size_t i = 0; i < live_.size() && i < last_thread_.size(); ++i) {
      const double now = i < ended.size() && ended[i] > 0 ? ended[i] : live_[i];
      if (now <= 0) continue;  // unreadable: keep its last reading
      double spin = i < spin_ns.size() ? static_cast<double>(spin_ns[i]) / 1e9 : 0;
      if (interval_s_ > 0)
        *busiest = std::max(*busiest, std::max(0.0, now - last_thread_[i] - spin) / interval_s_);
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
  LoopClock& clock_;
  double user_ = 0, system_ = 0;
  std::vector<double> last_thread_;
  std::vector<double> live_;  // sample()'s readings of the running threads
  std::vector<std::optional<SchedStat>> last_sched_;
  int64_t last_ns_ = 0;
  double interval_s_ = 0;  // between sample()'s last two readings: sample_wanted() uses it too
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

// The phase's worker threads: one per slot, each running its share of the clients through
// run_event_worker; the collector waits on `shared` for them to end.
class Workers {
 public:
  Workers(size_t n, LoopClock& clock) : tids_(n), finals_(n), final_cpu_(n, 0.0), clock_(clock) {
    shared.running = static_cast<int>(n);
  }
  ~Workers() { join(); }
  Workers(const Workers&) = delete;
  Workers& operator=(const Workers&) = delete;

  // Worker t runs the clients [t * conns, (t + 1) * conns) into slots[t].
  void start(const PhasePlan& plan, const WorkloadSpec& w,
             std::vector<std::unique_ptr<EventClient>>& clients, const ValueTable& values,
             std::vector<std::unique_ptr<StatsSlot>>& slots, int64_t start_ns,
             const std::atomic<bool>& stop, const std::atomic<bool>& abort) {
    const size_t n = slots.size();
    const size_t conns = static_cast<size_t>(w.connections);
    // Workers are numbered across every process of a --processes group, so their key and
    // request shares (and rate schedules) add up to the whole workload. With --segment, across
    // every segment of the run the same way.
    const bool segment = w.worker_total > 0;
    const auto first =
        segment ? static_cast<size_t>(w.worker_first) : static_cast<size_t>(w.process_index) * n;
    const auto count =
        segment ? static_cast<size_t>(w.worker_total) : static_cast<size_t>(w.process_count) * n;
    clock_.workers_begin(n);
    for (size_t t = 0; t < n; ++t) {
      threads_.emplace_back([&, t, first, count, conns, start_ns] {
        tids_[t].store(::gettid());
        std::span<const std::unique_ptr<EventClient>> mine(clients.data() + t * conns, conns);
        run_event_worker(WorkerContext{plan, w, values, mine, *slots[t], first + t, count, start_ns,
                                       stop, abort, clock_});
        const std::optional<SchedStat> last = thread_schedstat(::gettid());
        const double cpu_s = clock_s(CLOCK_THREAD_CPUTIME_ID);
        {
          std::lock_guard<std::mutex> lock(shared.mu);
          finals_[t] = last;
          final_cpu_[t] = cpu_s;
          --shared.running;
          shared.cv.notify_all();
        }
        clock_.worker_done();
      });
    }
  }
  void join() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  // What each ended worker read of its own schedstat as it ended (nullopt: still running).
  std::vector<std::optional<SchedStat>> finals() {
    std::lock_guard<std::mutex> lock(shared.mu);
    return finals_;
  }
  // Each ended worker's CPU clock as it ended, in seconds (0: still running, or unread).
  std::vector<double> final_cpu() {
    std::lock_guard<std::mutex> lock(shared.mu);
    return final_cpu_;
  }
  std::vector<std::thread>& threads() { return threads_; }
  const std::vector<std::atomic<pid_t>>& tids() const { return tids_; }

  Shared shared;

 private:
  std::vector<std::thread> threads_;
  std::vector<std::atomic<pid_t>> tids_;
  std::vector<std::optional<SchedStat>> finals_;
  std::vector<double> final_cpu_;
  LoopClock& clock_;
};

// Builds each row from what the collector drained, with the deltas of the workers' running
// totals (spinning, redirects, a pool's per-server counts) since the row before.
class RowBuilder {
 public:
  RowBuilder(const std::vector<std::unique_ptr<StatsSlot>>& slots, std::vector<std::string> pool,
             std::array<bool, kOpTypes> sends, bool redirects)
      : slots_(slots),
        pool_(std::move(pool)),
        pool_seen_(pool_.size()),
        spin_seen_(slots.size(), 0),
        sends_(sends),
        redirects_(redirects) {}

  // A second the collector slept through: a row with nothing in it.
  SecondReport empty(const RowFrame& f) const {
    SecondReport r;
    frame(f, r);
    for (size_t i = 0; i < kOpTypes; ++i)
      if (sends_[i]) r.by_op[i] = summarize(OpStats(), true);
    for (const std::string& server : pool_) r.pool.push_back({server, {}});
    return r;
  }

  // The row of `second`; *spin_delta: each worker's spinning in it (ns).
  SecondReport row(const RowFrame& f, const IntervalStats& second,
                   std::vector<uint64_t>* spin_delta) {
    SecondReport r;
    frame(f, r);
    for (OpType op : kAllOps) {
      const auto i = static_cast<size_t>(op);
      if (sends_[i] || !second[op].empty()) r.by_op[i] = summarize(second[op], sends_[i]);
    }
    spin_delta->assign(slots_.size(), 0);
    for (size_t i = 0; i < slots_.size(); ++i) {
      const uint64_t total = slots_[i]->spin_ns_total();
      (*spin_delta)[i] = total - std::exchange(spin_seen_[i], total);
      r.spin_us += static_cast<int64_t>((*spin_delta)[i] / 1000);
    }
    for (const auto& s : slots_)
      for (WorkerNote& note : s->take_notes())
        if (std::find(r.notes.begin(), r.notes.end(), note) == r.notes.end())
          r.notes.push_back(std::move(note));
    if (redirects_) {
      uint64_t moved = 0, asked = 0;
      for (const auto& s : slots_) {
        moved += s->moved_total();
        asked += s->asked_total();
      }
      r.moved = static_cast<int64_t>(moved - std::exchange(moved_seen_, moved));
      r.asked = static_cast<int64_t>(asked - std::exchange(asked_seen_, asked));
    }
    for (size_t i = 0; i < pool_.size(); ++i) {
      SecondReport::PoolSecond& p = r.pool.emplace_back();
      p.server = pool_[i];
      for (size_t c = 0; c < kPoolCounts; ++c) {
        uint64_t total = 0;
        for (const auto& s : slots_) total += s->pool_total(i, static_cast<PoolCount>(c));
        p.n[c] = static_cast<int64_t>(total - std::exchange(pool_seen_[i][c], total));
      }
    }
    return r;
  }

 private:
  static void frame(const RowFrame& f, SecondReport& r) {
    r.ts_us = f.ts_us;
    r.interval_us = f.interval_us;
    r.warmup = f.warmup;
    r.clock_offset_us = f.clock_offset_us;
  }
  const std::vector<std::unique_ptr<StatsSlot>>& slots_;
  const std::vector<std::string> pool_;
  std::vector<std::array<uint64_t, kPoolCounts>> pool_seen_;
  std::vector<uint64_t> spin_seen_;
  uint64_t moved_seen_ = 0, asked_seen_ = 0;
  const std::array<bool, kOpTypes> sends_;  // the ops the phase sends
  const bool redirects_;
};

enum class Why { none, max_errors, gave_up };

// Whether the phase must stop before its end: the error limit passed, or requests kept failing
// with none answered for plan.give_up_us (on the monotonic clock).
class Watchdog {
 public:
  Watchdog(const PhasePlan& plan, int64_t start_ns) : plan_(plan), last_answer_ns_(start_ns) {}
  // After each row (ending at row_end_ns, cut at now_ns; failed_total: the phase's so far):
  // true the first time the phase must stop.
  bool after_row(const SecondReport& row, int64_t row_end_ns, uint64_t failed_total,
                 int64_t now_ns) {
    if (row.ok() > 0) {
      last_answer_ns_ = row_end_ns;
      failed_since_answer_ = 0;
    } else {
      failed_since_answer_ += row.failed();
    }
    if (why_ != Why::none) return false;
    if (plan_.max_errors > 0 && failed_total >= plan_.max_errors) why_ = Why::max_errors;
    if (why_ == Why::none && plan_.give_up_us > 0 && failed_since_answer_ > 0 &&
        now_ns - last_answer_ns_ >= plan_.give_up_us * 1000)
      why_ = Why::gave_up;
    return why_ != Why::none;
  }
  Why why() const { return why_; }
  uint64_t failed_since_answer() const { return failed_since_answer_; }

 private:
  const PhasePlan& plan_;
  int64_t last_answer_ns_;  // the end of the latest row with an answer
  uint64_t failed_since_answer_ = 0;
  Why why_ = Why::none;
};

// The phase's status and error, once it is over.
void judge(PhaseResult& result, Why why, const PhasePlan& plan, uint64_t failed_since_answer,
           bool stopped, const std::string& trace_error) {
  if (!trace_error.empty()) {
    result.status = RunStatus::failed;
    result.error = "the trace could not be read on: " + trace_error;
    return;
  }
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
  if (result.status != RunStatus::failed && stopped) result.status = RunStatus::interrupted;
}

// A replay's trace that could not be read on (a worker's note): the first one, which fails the
// phase.
void keep_trace_error(const SecondReport& report, std::string& first) {
  for (const WorkerNote& note : report.notes)
    if (std::string_view(note.kind) == kTraceErrorNote && first.empty()) first = note.text;
}

// The ops a phase sends: each gets a row every second, even one in which nothing completed,
// and its stats are allocated in every slot before the workers start.
// (A replay's prepends go to a Redis target as APPEND: replay_op.)
std::array<bool, kOpTypes> ops_sent(const PhasePlan& plan, const WorkloadSpec& w, bool redis,
                                    const std::vector<std::unique_ptr<StatsSlot>>& slots) {
  std::array<bool, kOpTypes> sends{};
  for (OpType op : kAllOps) {
    sends[static_cast<size_t>(op)] =
        w.phase_sends(plan.kind, op) &&
        !(plan.kind == PhaseKind::trace && redis && op == OpType::prepend);
    if (sends[static_cast<size_t>(op)])
      for (const auto& s : slots) s->prepare(op);
  }
  return sends;
}

}  // namespace

double thread_wanted_fraction(uint64_t wanted_delta_ns, uint64_t spin_ns, double interval_s) {
  if (!(interval_s > 0) || wanted_delta_ns <= spin_ns) return 0;
  return std::min(1.0, static_cast<double>(wanted_delta_ns - spin_ns) / 1e9 / interval_s);
}

// The collector: wakes on each row's end (or the duration's, or the last worker's), cuts,
// builds the row and decides whether the phase goes on.
PhaseResult run_phase(const PhasePlan& plan, const WorkloadSpec& w,
                      std::vector<std::unique_ptr<EventClient>>& clients, const ValueTable& values,
                      const std::atomic<bool>& stop, const std::function<void(int64_t)>& on_start,
                      const std::function<void(const SecondReport&)>& on_second, LoopClock& clock) {
  const size_t n = clients.size() / static_cast<size_t>(w.connections);  // workers
  std::vector<std::unique_ptr<StatsSlot>> slots;
  for (size_t i = 0; i < n; ++i) slots.push_back(std::make_unique<StatsSlot>(plan.open_loop()));
  // A memcached pool's servers, each counted apart (pool_server_seconds).
  std::vector<std::string> pool =
      clients.empty() ? std::vector<std::string>{} : clients.front()->pool_servers();
  for (auto& s : slots) s->set_pool_servers(pool.size());
  std::atomic<bool> abort{false};
  const bool redis = !clients.empty() && clients.front()->spec().protocol == Protocol::redis;
  RowBuilder rows(slots, std::move(pool), ops_sent(plan, w, redis, slots),
                  !clients.empty() && clients.front()->follows_redirects());

  SecondCutter cutter(clock, plan.warmup_us);
  const int64_t start_ns = cutter.start_ns();
  PhaseResult result;
  result.started_ts_us = cutter.started_ts_us();
  on_start(result.started_ts_us);
  // The duration is the monotonic clock's, as the workers' end (phase_end_ns): a wall clock
  // stepped or slewed meanwhile moves the rows' times, never the phase's length.
  const int64_t duration_end_ns =
      plan.duration_us > 0 ? start_ns + plan.duration_us * 1000 : INT64_MAX;

  Workers workers(n, clock);
  workers.start(plan, w, clients, values, slots, start_ns, stop, abort);
  SinkThread sink(on_second);
  CpuMeter cpu(workers.threads(), clock);
  IntervalStats second;
  Watchdog watchdog(plan, start_ns);
  std::string trace_error;  // a replay's trace that could not be read on
  for (bool done = false; !done;) {
    // The row ends at the next whole second, or when the last worker is done. The phase's
    // duration ends inside a row: the collector wakes then to stop the workers, and the row
    // goes on until they are done (with the requests that were in flight).
    const int64_t row_end_ts = cutter.row_end_ts_us();
    for (;;) {
      const int64_t row_end_ns = cutter.to_steady_ns(row_end_ts);
      const bool duration_first = !abort && duration_end_ns < row_end_ns;
      std::unique_lock<std::mutex> lock(workers.shared.mu);
      done =
          clock.wait_until(lock, workers.shared.cv, duration_first ? duration_end_ns : row_end_ns,
                           [&] { return workers.shared.running == 0; });
      if (done || !duration_first) break;
      abort = true;
    }
    SecondCutter::Cut cut = cutter.cut(done);
    const int64_t now_ns = clock.steady_ns();
    for (auto& s : slots) s->drain_into(second);
    for (const RowFrame& f : cut.empty) sink.push(rows.empty(f));
    std::vector<uint64_t> spin_delta;
    SecondReport report = rows.row(cut.row, second, &spin_delta);
    cpu.sample(
        workers.threads(), [&] { return workers.final_cpu(); }, spin_delta, &report.cpu_user_s,
        &report.cpu_system_s, &report.busiest_thread_cpu);
    cpu.sample_wanted(workers.tids(), workers.finals(), spin_delta, &report.busiest_thread_wanted,
                      &report.run_delay_us);
    keep_trace_error(report, trace_error);
    if (!report.warmup) result.totals.merge(second);
    result.ops += report.ops();
    result.failed += report.failed();
    if (watchdog.after_row(report, cutter.to_steady_ns(cut.row.end_ts_us()), result.failed, now_ns))
      abort = true;
    sink.push(std::move(report));
    second.reset();
    if (sink.failed()) abort = true;              // nowhere to write: stop the workers
    if (now_ns >= duration_end_ns) abort = true;  // woken late, past the end
  }
  workers.join();
  result.ended_ts_us = cutter.row_start_ts_us();
  sink.close();
  sink.rethrow();
  judge(result, watchdog.why(), plan, watchdog.failed_since_answer(), stop.load(), trace_error);
  return result;
}

}  // namespace kv::drive
