#include "phase_runner.hpp"

#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <span>
#include <thread>

#include "kvbench/clock.hpp"
#include "worker.hpp"

namespace kv::drive {
namespace {

struct Shared {
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
};

double to_s(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

double thread_cpu_s(std::thread& t) {
  clockid_t id{};
  timespec ts{};
  if (pthread_getcpuclockid(t.native_handle(), &id) != 0 || clock_gettime(id, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Client CPU bookkeeping between two collections.
class CpuMeter {
 public:
  explicit CpuMeter(size_t workers) : last_thread_(workers, 0.0) { read(user_, system_); }
  void sample(std::vector<std::thread>& threads, double interval_s, double* user_s,
              double* system_s, double* busiest) {
    double u = 0, s = 0;
    read(u, s);
    *user_s = u - user_;
    *system_s = s - system_;
    user_ = u;
    system_ = s;
    *busiest = 0;
    for (size_t i = 0; i < threads.size() && i < last_thread_.size(); ++i) {
      double now = thread_cpu_s(threads[i]);
      if (interval_s > 0) *busiest = std::max(*busiest, (now - last_thread_[i]) / interval_s);
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
};

uint64_t failures(const IntervalStats& s) {
  uint64_t n = 0;
  for (const auto& o : s.by_op) n += o.errors + o.timeouts;
  return n;
}

}  // namespace

const char* phase_status_name(PhaseStatus s) {
  switch (s) {
    case PhaseStatus::completed: return "completed";
    case PhaseStatus::interrupted: return "interrupted";
    case PhaseStatus::failed: return "failed";
  }
  return "?";
}

PhasePlan plan_phase(PhaseKind kind, const WorkloadSpec& w) {
  PhasePlan p;
  p.kind = kind;
  p.rate = w.rate;
  p.warmup_us = w.warmup_us;
  if (kind == PhaseKind::load) {
    p.requests = w.keys;
  } else if (w.duration_us > 0) {
    p.duration_us = w.duration_us;
    p.requests = w.requests;  // 0: until the duration ends
  } else {
    p.requests = w.requests > 0 ? w.requests : w.keys;
  }
  return p;
}

PhaseResult run_phase(const PhasePlan& plan, const WorkloadSpec& w,
                      std::vector<std::unique_ptr<StoreClient>>& clients, const ValueTable& values,
                      const std::atomic<bool>& stop,
                      const std::function<void(int64_t)>& on_start,
                      const std::function<void(const SecondReport&)>& on_second) {
  const size_t conns = static_cast<size_t>(w.connections);
  const size_t n = clients.size() / conns;  // workers
  std::vector<std::unique_ptr<StatsSlot>> slots;
  for (size_t i = 0; i < n; ++i) slots.push_back(std::make_unique<StatsSlot>(plan.rate > 0));
  Shared shared;
  shared.running = static_cast<int>(n);
  std::atomic<bool> abort{false};

  PhaseResult result;
  result.started_ts_us = now_ts_us();
  on_start(result.started_ts_us);
  const int64_t start_ns = steady_ns();
  const int64_t start_us = start_ns / 1000;
  const int64_t warmup_seconds = (plan.warmup_us + 999'999) / 1'000'000;

  std::vector<std::thread> threads;
  for (size_t t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      std::span<const std::unique_ptr<StoreClient>> mine(clients.data() + t * conns, conns);
      // Workers are numbered across every process of a --processes group, so their key and
      // request shares (and rate schedules) add up to the whole workload.
      const auto procs = static_cast<size_t>(w.process_count);
      const auto first = static_cast<size_t>(w.process_index) * n;
      run_worker(WorkerContext{plan, w, values, mine, *slots[t], first + t, procs * n, start_ns,
                               stop, abort});
      std::lock_guard<std::mutex> lock(shared.mu);
      --shared.running;
      shared.cv.notify_all();
    });
  }

  CpuMeter cpu(n);
  IntervalStats second;
  int64_t interval_start_us = start_us;
  int64_t interval_start_ts = result.started_ts_us;
  uint64_t failed_requests = 0;
  for (int64_t k = 1;; ++k) {
    const int64_t boundary_us = start_us + k * 1'000'000;
    bool done = false;
    {
      std::unique_lock<std::mutex> lock(shared.mu);
      auto deadline = std::chrono::steady_clock::time_point(std::chrono::microseconds(boundary_us));
      done = shared.cv.wait_until(lock, deadline, [&] { return shared.running == 0; });
    }
    const int64_t now_us = steady_us();
    for (auto& s : slots) s->drain_into(second);
    const int64_t interval_us = now_us - interval_start_us;
    SecondReport report{interval_start_ts, interval_us, k <= warmup_seconds, second, 0, 0, 0};
    cpu.sample(threads, static_cast<double>(interval_us) / 1e6, &report.cpu_user_s,
               &report.cpu_system_s, &report.busiest_thread_cpu);
    try {
      on_second(report);
    } catch (...) {
      // The sink failed (disk full, database gone): stop the workers before leaving, or their
      // threads would outlive the phase.
      abort = true;
      for (auto& t : threads) t.join();
      throw;
    }
    if (!report.warmup) result.totals.merge(second);
    failed_requests += failures(second);
    second.reset();
    interval_start_ts += interval_us;
    interval_start_us = now_us;
    if (plan.max_errors > 0 && failed_requests >= plan.max_errors && !abort) {
      result.status = PhaseStatus::failed;
      result.error = std::to_string(failed_requests) + " requests failed (--max-errors " +
                     std::to_string(plan.max_errors) + ")";
      abort = true;
    }
    if (plan.duration_us > 0 && now_us - start_us >= plan.duration_us) abort = true;
    if (done) break;
  }
  for (auto& t : threads) t.join();
  result.ended_ts_us = interval_start_ts;
  if (result.status != PhaseStatus::failed && stop.load()) result.status = PhaseStatus::interrupted;
  return result;
}

}  // namespace kv::drive
