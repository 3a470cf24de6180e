#include "search/search_group.hpp"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <functional>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "kvbench/clock.hpp"
#include "kvbench/line_pipe.hpp"
#include "kvbench/log.hpp"
#include "store/target_uri.hpp"

namespace kv::drive {
namespace {

std::string number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// A process's step as it reports it.
struct FollowerStep {
  int64_t phase_id = 0, from_ts_us = 0, ended_ts_us = 0;
  StepMeasure m;  // client side; latency from the file
};

std::string step_line(const StepRun& r) {
  const StepMeasure& m = r.measure;
  std::string line = "step";
  for (double v :
       {static_cast<double>(r.phase_id), static_cast<double>(r.measured_from_ts_us),
        static_cast<double>(r.ended_ts_us), static_cast<double>(m.ops),
        static_cast<double>(m.failed), m.seconds, m.sent_latency_mean_us, m.slip_p50_us,
        m.slip_p99_us, m.busiest_thread_cpu, m.busiest_thread_wanted,
        static_cast<double>(m.in_flight_slots), static_cast<double>(m.run_delay_max_us)}) {
    line += ' ';
    line += number(v);
  }
  return line;
}

std::optional<FollowerStep> parse_step(const std::string& line) {
  std::istringstream in(line);
  std::string word;
  double v[13];
  if (!(in >> word) || word != "step") return std::nullopt;
  for (double& x : v)
    if (!(in >> x)) return std::nullopt;
  FollowerStep f;
  f.phase_id = static_cast<int64_t>(v[0]);
  f.from_ts_us = static_cast<int64_t>(v[1]);
  f.ended_ts_us = static_cast<int64_t>(v[2]);
  f.m.ops = static_cast<uint64_t>(v[3]);
  f.m.failed = static_cast<uint64_t>(v[4]);
  f.m.seconds = v[5];
  f.m.sent_latency_mean_us = v[6];
  f.m.slip_p50_us = v[7];
  f.m.slip_p99_us = v[8];
  f.m.busiest_thread_cpu = v[9];
  f.m.busiest_thread_wanted = v[10];
  f.m.in_flight_slots = static_cast<uint64_t>(v[11]);
  f.m.run_delay_max_us = static_cast<int64_t>(v[12]);
  return f;
}

// The processes' intended-time latency of their step phases, added bucket by bucket (each at
// its upper bound, never above the largest latency any of them saw).
LatencyHistogram group_latency_of(Database& db, const std::string& phase_ids) {
  auto range = db.prepare(
      "SELECT MAX(max_us) FROM latency_range WHERE timing = 'intended' AND phase_id IN (" +
      phase_ids + ")");
  LatencyHistogram h;
  if (!range.step() || range.is_null(0)) return h;
  const auto max_ns = static_cast<uint64_t>(std::llround(range.column_double(0) * 1000));
  auto buckets = db.prepare(
      "SELECT upper_us, SUM(count) FROM latency_buckets WHERE timing = 'intended' AND phase_id "
      "IN (" +
      phase_ids + ") GROUP BY upper_us");
  while (buckets.step()) {
    const auto upper_ns = static_cast<uint64_t>(std::llround(buckets.column_double(0) * 1000));
    h.record_n(std::min(upper_ns, max_ns), static_cast<uint64_t>(buckets.column_int(1)));
  }
  return h;
}

// The group's step: the processes' counts added, their client limits at the worst process's,
// the latency from their phases' histograms in the file together.
StepRun merge_steps(Database& db, const std::vector<FollowerStep>& steps) {
  StepRun r;
  r.phase_id = steps.front().phase_id;
  r.measured_from_ts_us = steps.front().from_ts_us;
  r.ended_ts_us = steps.front().ended_ts_us;
  StepMeasure& m = r.measure;
  std::string ids;
  double achieved = 0, sent_sum = 0;
  for (const auto& f : steps) {
    r.measured_from_ts_us = std::min(r.measured_from_ts_us, f.from_ts_us);
    r.ended_ts_us = std::max(r.ended_ts_us, f.ended_ts_us);
    m.ops += f.m.ops;
    m.failed += f.m.failed;
    achieved += f.m.achieved_rate();
    sent_sum += f.m.sent_latency_mean_us * static_cast<double>(f.m.ops);
    // The worst process decides the client's limits: one client-bound process is enough.
    m.slip_p50_us = std::max(m.slip_p50_us, f.m.slip_p50_us);
    m.slip_p99_us = std::max(m.slip_p99_us, f.m.slip_p99_us);
    m.busiest_thread_cpu = std::max(m.busiest_thread_cpu, f.m.busiest_thread_cpu);
    m.busiest_thread_wanted = std::max(m.busiest_thread_wanted, f.m.busiest_thread_wanted);
    m.run_delay_max_us = std::max(m.run_delay_max_us, f.m.run_delay_max_us);
    m.in_flight_slots += f.m.in_flight_slots;
    if (!ids.empty()) ids += ", ";
    ids += std::to_string(f.phase_id);
  }
  // The group's achieved rate is the sum of its processes' (each over its own window): the
  // window is the one over which the group's requests give that rate.
  m.seconds = achieved > 0 ? static_cast<double>(m.ok()) / achieved
                           : static_cast<double>(r.ended_ts_us - r.measured_from_ts_us) / 1e6;
  m.sent_latency_mean_us = m.ops > 0 ? sent_sum / static_cast<double>(m.ops) : 0;
  m.latency = group_latency_of(db, ids);
  return r;
}

// The phases before the steps (the load) start in every process at once, as a --processes
// run's: each round is one line from every process (next_line), all "ready T P" (released
// together with one "go TS") or all "loaded RUN TARGET" (the search begins; process 0's run and
// target are the search's). A process that ended, or a mix, ends it: false.
bool wait_for_loads(const std::vector<FollowerPipes>& followers,
                    const std::function<std::optional<std::string>(int)>& next_line,
                    const std::atomic<bool>& stop, int64_t* run_id, int64_t* target_id) {
  const auto is_ready = [](const std::string& l) { return l.rfind("ready ", 0) == 0; };
  for (;;) {
    std::vector<std::string> lines;
    for (size_t i = 0; i < followers.size(); ++i) {
      auto line = next_line(followers[i].from_child);
      if (!line) {
        if (!stop.load())
          log_error() << "--search: process " << i << " did not finish its load phase";
        return false;
      }
      lines.push_back(std::move(*line));
    }
    if (std::all_of(lines.begin(), lines.end(), is_ready)) {
      const std::string go = go_line(now_ts_us());
      for (const auto& f : followers) write_line(f.to_child, go);
      continue;
    }
    long long run = 0, target = 0;
    const auto loaded = [&](const std::string& l) {
      return std::sscanf(l.c_str(), "loaded %lld %lld", &run, &target) == 2;
    };
    // Process 0's run is the search's: its line is parsed last.
    if (!std::all_of(lines.rbegin(), lines.rend(), loaded)) {
      log_error() << "--search: the group's processes are out of step before the search";
      return false;
    }
    *run_id = run;
    *target_id = target;
    return true;
  }
}

}  // namespace

bool follow_search(int in_fd, int out_fd, int64_t run_id, int64_t target_id,
                   const StepRunner& run_step) {
  if (!write_line(out_fd, "loaded " + std::to_string(run_id) + " " + std::to_string(target_id)))
    return false;
  while (auto line = read_line(in_fd)) {
    // "RATE TS": the step's rate and when every process starts it.
    double rate = 0;
    int64_t start_ts_us = 0;
    std::istringstream in(*line);
    if (!(in >> rate >> start_ts_us))
      throw std::runtime_error("--search-follow: not a step from the group's parent: " + *line);
    sleep_until_ts_us(start_ts_us);
    std::optional<StepRun> r = run_step(rate);
    if (!r) {
      write_line(out_fd, "stopped");
      return false;
    }
    if (!write_line(out_fd, step_line(*r))) return false;
  }
  return true;
}

bool lead_search(const SearchOptions& s, const std::string& db_path, const std::string& target_uri,
                 std::vector<FollowerPipes> followers, const std::atomic<bool>& stop) {
  // A process that ended early closes its pipe: the write fails (EPIPE) instead of killing us.
  struct IgnorePipe {
    void (*old)(int) = std::signal(SIGPIPE, SIG_IGN);
    ~IgnorePipe() { std::signal(SIGPIPE, old); }
  } ignore_pipe;
  struct Closer {
    std::vector<FollowerPipes>& f;
    ~Closer() {
      for (auto& p : f) {
        if (p.to_child >= 0) ::close(p.to_child);
        if (p.from_child >= 0) ::close(p.from_child);
      }
    }
  } closer{followers};
  // SIGINT/SIGTERM to this process alone (a terminal's Ctrl-C reaches the processes itself):
  // each process is told once to stop as at a Ctrl-C, which ends the phase it is running.
  bool told = false;
  const auto tell_stop = [&] {
    if (told || !stop.load()) return;
    told = true;
    for (const auto& f : followers) ::kill(f.pid, kGroupStopSignal);
  };
  // A process's next line, waited for in polls short enough to pass a stop on promptly.
  const auto answer_of = [&](int fd) {
    for (;;) {
      tell_stop();
      pollfd p{fd, POLLIN, 0};
      const int n = ::poll(&p, 1, 50);
      if (n > 0 || (n < 0 && errno != EINTR)) return read_line(fd);
    }
  };

  int64_t run_id = 0, target_id = 0;
  if (!wait_for_loads(followers, answer_of, stop, &run_id, &target_id)) return false;
  const TargetSpec spec = parse_target_uri(target_uri);
  Database db = Database::open(db_path);
  const double n = static_cast<double>(followers.size());
  auto run_step = [&](double rate) -> std::optional<StepRun> {
    tell_stop();
    if (stop.load()) return std::nullopt;  // the search ends interrupted, as without --processes
    const std::string rate_line = number(rate) + " " + std::to_string(now_ts_us() + kGoLeadUs);
    for (auto& f : followers) write_line(f.to_child, rate_line);
    std::vector<FollowerStep> steps;
    bool all = true;
    for (auto& f : followers) {  // every process's answer, even after one that stopped
      const auto line = answer_of(f.from_child);
      auto step = line ? parse_step(*line) : std::nullopt;
      if (step)
        steps.push_back(*step);
      else
        all = false;
    }
    if (!all) return std::nullopt;
    return merge_steps(db, steps);
  };
  return run_search(s, db, run_id, target_id, spec.protocol,
                    spec.display + " (" + number(n) + " processes)", run_step);
}

}  // namespace kv::drive
