#include "engine/run.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "engine/phase_runner.hpp"
#include "engine/progress.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/protocol.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "kvmon_link/monitors.hpp"
#include "report/report.hpp"
#include "report/text_table.hpp"
#include "results/results_writer.hpp"
#include "store/memcached_client.hpp"
#include "store/store_stats.hpp"

namespace kv::drive {
namespace {

// The write end of the running RunWatcher's pipe, for leave_now_on_signal; -1 when none.
std::atomic<int> g_leave_fd{-1};

// A thread beside the run that acts on signals without waiting for the workers:
//  - once `stop` is set (the first Ctrl-C), it interrupts the watched clients, so a request
//    blocked on a stalled store gives up at once instead of after --timeout;
//  - a second Ctrl-C (leave_now_on_signal) marks the run and its running phases interrupted on
//    a connection of its own and exits 130 at once, whatever the other threads are doing.
class RunWatcher {
 public:
  RunWatcher(const std::atomic<bool>& stop, std::string db_path, int64_t run_id)
      : stop_(stop), db_path_(std::move(db_path)), run_id_(run_id) {
    if (pipe2(pipe_, O_CLOEXEC | O_NONBLOCK) != 0) pipe_[0] = pipe_[1] = -1;
    thread_ = std::thread([this] { loop(); });
    g_leave_fd.store(pipe_[1]);
  }
  ~RunWatcher() {
    g_leave_fd.store(-1);
    done_ = true;
    thread_.join();
    for (int fd : pipe_) {
      if (fd >= 0) close(fd);
    }
  }
  RunWatcher(const RunWatcher&) = delete;
  RunWatcher& operator=(const RunWatcher&) = delete;

  // The clients of the phase now running (nullptr: none); interrupted at once if stop is set.
  void watch(std::vector<std::unique_ptr<StoreClient>>* clients) {
    std::lock_guard<std::mutex> lock(mu_);
    clients_ = clients;
    if (clients_ && stop_.load()) interrupt_locked();
  }

 private:
  void loop() {
    while (!done_) {
      pollfd p{pipe_[0], POLLIN, 0};
      int n = poll(&p, 1, 50);
      if (n > 0 && (p.revents & POLLIN)) leave();
      if (stop_.load()) {
        std::lock_guard<std::mutex> lock(mu_);
        interrupt_locked();
      }
    }
  }
  void interrupt_locked() {
    if (!clients_) return;
    for (auto& c : *clients_) c->interrupt();
  }
  [[noreturn]] void leave() {
    try {
      Database db = Database::open(db_path_, 2000);
      const int64_t now = now_ts_us();
      db.prepare(
            "UPDATE phases SET status = 'interrupted', ended_ts_us = ? "
            "WHERE run_id = ? AND status = 'running'")
          .bind(1, now)
          .bind(2, run_id_)
          .run();
      db.prepare(
            "UPDATE runs SET status = 'interrupted', ended_ts_us = ?, error = "
            "'interrupted by a second signal: left at once' "
            "WHERE run_id = ? AND status = 'running'")
          .bind(1, now)
          .bind(2, run_id_)
          .run();
    } catch (...) {
      // The file is busy or gone: the next open marks the run incomplete instead.
    }
    _exit(kExitInterrupted);
  }

  const std::atomic<bool>& stop_;
  const std::string db_path_;
  const int64_t run_id_;
  int pipe_[2] = {-1, -1};
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::vector<std::unique_ptr<StoreClient>>* clients_ = nullptr;
  std::thread thread_;
};

std::vector<ProgressField> progress_fields(const std::string& label, double elapsed_s,
                                           const SecondReport& sec, uint64_t done, uint64_t planned,
                                           double planned_s) {
  // req/s: answered requests per wall second; p99: the worse of the ops' p99 in that second.
  namespace pp = progress_priority;
  const uint64_t errors = sec.failed();
  double p99_us = 0;
  for (const auto& s : sec.by_op)
    if (s.ops > 0) p99_us = std::max(p99_us, s.lat_p99_us);
  double rate = sec.interval_us > 0
                    ? static_cast<double>(sec.ok()) * 1e6 / static_cast<double>(sec.interval_us)
                    : 0;
  std::string total = planned_s > 0 ? "/" + fmt_fixed(planned_s, 0) + " s" : " s";
  std::string count = fmt_int(static_cast<double>(done)) +
                      (planned > 0 ? "/" + fmt_int(static_cast<double>(planned)) : "");
  return {
      {label + (sec.warmup ? " (warm-up)" : ""), pp::kLabel},
      {fmt_fixed(elapsed_s, 0) + total, pp::kElapsed},
      {count, pp::kCount},
      {fmt_int(rate) + " req/s", pp::kRate},
      {"p99 " + fmt_fixed(p99_us / 1e3, 3) + " ms", pp::kP99},
      {"errors " + fmt_int(static_cast<double>(errors)), errors > 0 ? pp::kErrors : pp::kNoErrors}};
}

// Connects `n` clients to the target; throws std::runtime_error naming it if any cannot.
std::vector<std::unique_ptr<StoreClient>> connect_clients(const TargetSpec& spec, int n,
                                                          const ClientOptions& copts) {
  std::vector<std::unique_ptr<StoreClient>> clients;
  for (int i = 0; i < n; ++i) {
    auto c = make_store_client(spec, copts);
    if (auto r = c->connect(); !r.ok()) throw std::runtime_error(r.error().message);
    clients.push_back(std::move(c));
  }
  return clients;
}

// Where a phase stands in the run, for its rows and its progress line.
struct PhaseSlot {
  int64_t run_id, target_id;
  int ordinal;
  const std::string& step;
  std::string label;
  StoreStatsPoller* stats;  // the store's own counters, polled on their own connection
  Monitors* monitors;       // kvmon links (--monitor)
  Database* db;
  RunWatcher* watcher;  // interrupts the phase's clients at Ctrl-C
  const TargetSpec* spec;
};

// A pipelined memcached text-protocol phase does not see each set's verdict: libmemcached reads
// a batch's set replies but keeps only the last, so a set the server refused (out of memory,
// too large, read-only, masked command) counts as ok. Until the request engine reads every
// reply, such a phase is checked from outside: the server's own counters (cmd_set,
// store_no_memory, store_too_large) before and after, exact when kvdrive was its only writer;
// for a server without them, a load phase's keys are read back in a sample. What is found is a
// warning and a `set_verdicts_unseen` event.
class UnseenSetCheck {
 public:
  UnseenSetCheck(const TargetSpec& spec, const WorkloadSpec& w, PhaseKind kind, int64_t timeout_us)
      : spec_(spec), w_(w), kind_(kind), timeout_us_(std::min<int64_t>(timeout_us, 2'000'000)) {
    const bool sends_sets =
        kind == PhaseKind::load || (kind == PhaseKind::mixed && w.ratio_sets > 0);
    const bool buffered = w.pipeline > 1 || w.connections > 1;  // worker.cpp's pipelined path
    active_ = spec.protocol == Protocol::memcached && !spec.binary_protocol && sends_sets &&
              buffered && spec.servers.size() == 1;
    if (active_) {
      if (auto c = read_set_counters(spec_, timeout_us_)) {
        before_ = *c;
        have_before_ = true;
      }
    }
  }

  // What to say once the phase has sent `sent` sets (empty: nothing found, or not checked).
  // *refused_exactly: how many of them the server refused, when its counters say so exactly.
  std::string after(const std::string& label, uint64_t sent, uint64_t abandoned,
                    uint64_t* refused_exactly) {
    *refused_exactly = 0;
    if (!active_ || sent == 0) return "";
    const std::string unseen =
        ": set verdicts are not seen over the text protocol with --pipeline or --connections > 1 "
        "(libmemcached reads only each batch's last reply); ?protocol=binary counts each refused "
        "set as an error";
    MemcachedSetCounters after;
    bool have_after = false;
    if (have_before_) {
      if (auto c = read_set_counters(spec_, timeout_us_)) {
        after = *c;
        have_after = true;
      }
    }
    if (have_before_ && have_after && before_.cmd_set >= 0 && after.cmd_set >= 0 &&
        (before_.no_memory >= 0 || before_.too_large >= 0)) {
      auto delta = [](int64_t a, int64_t b) -> uint64_t {
        return a >= 0 && b >= a ? static_cast<uint64_t>(b - a) : 0;
      };
      const uint64_t no_memory = delta(before_.no_memory, after.no_memory);
      const uint64_t too_large = delta(before_.too_large, after.too_large);
      const uint64_t refused = no_memory + too_large;
      const uint64_t counted = delta(before_.cmd_set, after.cmd_set);
      if (refused == 0) return "";
      std::string figures = "store_no_memory +" + std::to_string(no_memory) +
                            ", store_too_large +" + std::to_string(too_large);
      // memcached 1.6 leaves sets refused for memory out of cmd_set; others may count them.
      if ((counted == sent || counted + refused == sent) && abandoned == 0) {
        *refused_exactly = refused;
        return label + ": the server refused " + std::to_string(refused) + " of the " +
               std::to_string(sent) + " sets kvdrive counted as ok (" + figures + ")" + unseen;
      }
      return label + ": the server refused " + std::to_string(refused) +
             " sets while this phase ran (" + figures + "; it counted " + std::to_string(counted) +
             " sets, kvdrive sent " + std::to_string(sent) +
             ": other clients wrote too), and kvdrive counted its sets as ok" + unseen;
    }
    if (kind_ == PhaseKind::load && w_.ttl_s == 0 && w_.process_count == 1) {
      // 100 keys spread over the whole key range.
      std::vector<std::string> keys;
      const uint64_t samples = std::min<uint64_t>(100, w_.keys);
      KeyFormatter f(w_.key_prefix);
      for (uint64_t i = 0; i < samples; ++i) keys.emplace_back(f.format(i * w_.keys / samples));
      auto sample = sample_keys_present(spec_, keys, timeout_us_);
      if (!sample) return "";
      if (sample->present == sample->sampled) return "";
      return label + ": " + std::to_string(sample->sampled - sample->present) + " of " +
             std::to_string(sample->sampled) +
             " keys read back after the load are not on the server: it refused (or dropped) sets "
             "that kvdrive counted as ok" +
             unseen;
    }
    return label +
           ": this server has no set counters to check against: sets it refused are "
           "counted as ok" +
           unseen;
  }

 private:
  const TargetSpec& spec_;
  const WorkloadSpec& w_;
  PhaseKind kind_;
  int64_t timeout_us_;
  bool active_ = false;
  MemcachedSetCounters before_;
  bool have_before_ = false;
};

// The store's own memory figure for the progress line: used_memory (Redis), bytes (memcached).
// A kvmon on this host writing the same file: the store process's latest RSS and swap, found by
// the pid the store reports about itself. Empty when there is none (yet).
std::string local_store_memory(Database& db, const StoreStatsPoller& stats) {
  auto pid = stats.latest("process_id");
  if (!pid) pid = stats.latest("pid");
  if (!pid) return "";
  auto q = db.prepare(
      "SELECT s.rss_kib, s.swap_kib FROM process_samples s JOIN process_instances i "
      "USING (instance_id) WHERE i.pid = ? AND i.parent_instance_id IS NULL "
      "ORDER BY s.ts_us DESC LIMIT 1");
  q.bind(1, static_cast<int64_t>(*pid));
  if (!q.step() || q.is_null(0)) return "";
  std::string text = "  rss " + format_size(static_cast<uint64_t>(q.column_int(0)) * 1024);
  if (!q.is_null(1)) text += " swap " + format_size(static_cast<uint64_t>(q.column_int(1)) * 1024);
  return text;
}

std::string store_memory_text(const StoreStatsPoller& stats) {
  auto v = stats.latest("used_memory");
  if (!v) v = stats.latest("bytes");
  return v ? "  store mem " + format_size(static_cast<uint64_t>(*v)) : "";
}

// Runs one phase and records it. Returns its status (error set when not completed).
PhaseStatus run_one_phase(const RunOptions& opts, const PhaseSlot& at, const WorkloadSpec& w,
                          PhaseKind kind, std::vector<std::unique_ptr<StoreClient>>& clients,
                          ResultsWriter& writer, const ValueTable& values,
                          const std::atomic<bool>& stop, std::string* error) {
  PhasePlan plan = plan_phase(kind, w);
  plan.max_errors = opts.max_errors;
  plan.give_up_us = opts.give_up_us;
  const bool rate_mode = plan.rate > 0;
  const std::string label = at.label + " " + phase_kind_name(kind);
  ProgressLine progress(opts.progress);
  int64_t phase_id = 0;
  uint64_t done = 0;
  int64_t started = 0;
  bool warned_cpu = false;
  auto on_start = [&](int64_t ts) {
    started = ts;
    phase_id = writer.begin_phase({at.run_id, at.target_id, at.ordinal, at.step, plan, ts,
                                   w.threads, w.threads * w.connections, w.to_json()});
  };
  auto on_second = [&](const SecondReport& sec) {
    writer.write_second(phase_id, sec, rate_mode);
    writer.write_store_stats(at.target_id, at.stats->drain());
    std::string monitored = at.monitors->flush(*at.db);
    if (monitored.empty()) monitored = local_store_memory(*at.db, *at.stats);
    done += sec.ops();
    if (sec.busiest_thread_cpu > 0.9 && !warned_cpu) {
      warned_cpu = true;
      std::string msg = "a worker thread used " + fmt_int(sec.busiest_thread_cpu * 100) +
                        " % of a core: the client may be the bottleneck, not the store";
      progress.finish();
      log_warn() << label << ": " << msg;
      writer.event(at.run_id, "client_bound", label + ": " + msg);
    }
    auto fields =
        progress_fields(label, static_cast<double>(sec.ts_us + sec.interval_us - started) / 1e6,
                        sec, done, plan.requests, static_cast<double>(plan.duration_us) / 1e6);
    add_progress_fields(fields, store_memory_text(*at.stats), progress_priority::kStoreMemory);
    add_progress_fields(fields, monitored, progress_priority::kMonitored);
    progress.update(fields);
  };
  UnseenSetCheck set_check(*at.spec, w, kind, opts.client.timeout_us);
  at.watcher->watch(&clients);
  PhaseResult result;
  try {
    result = run_phase(plan, w, clients, values, stop, on_start, on_second);
  } catch (...) {
    at.watcher->watch(nullptr);
    throw;
  }
  at.watcher->watch(nullptr);
  progress.finish();
  uint64_t abandoned = 0;
  for (const auto& c : clients) abandoned += c->abandoned();
  if (abandoned > 0) {
    std::string msg = label + ": " + std::to_string(abandoned) +
                      " requests in flight at the interrupt were given up: not counted, but the "
                      "store may have executed them";
    log_warn() << msg;
    writer.event(at.run_id, "requests_abandoned", msg);
  }
  if (result.status != PhaseStatus::interrupted) {
    auto q = at.db->prepare(
        "SELECT COALESCE(SUM(ops), 0), COALESCE(SUM(ok), 0) FROM "
        "driver_seconds WHERE phase_id = ? AND op = 'set'");
    q.bind(1, phase_id);
    const bool have = q.step();
    const uint64_t sent = have ? static_cast<uint64_t>(q.column_int(0)) : 0;
    const uint64_t sets_ok = have ? static_cast<uint64_t>(q.column_int(1)) : 0;
    uint64_t refused = 0;
    if (std::string msg = set_check.after(label, sent, abandoned, &refused); !msg.empty()) {
      log_warn() << msg;
      writer.event(at.run_id, "set_verdicts_unseen", msg);
    }
    // Every set counted ok was refused: then each second's sets are known to be errors, exactly
    // (a partial refusal cannot be placed in its seconds, and is left to the event).
    if (refused > 0 && refused == sets_ok) {
      WriteTransaction tx(*at.db);
      at.db
          ->prepare(
              "UPDATE driver_seconds SET errors = errors + ok, ok = 0 "
              "WHERE phase_id = ? AND op = 'set'")
          .bind(1, phase_id)
          .run();
      tx.commit();
      auto left =
          at.db->prepare("SELECT COALESCE(SUM(ok), 0) FROM driver_seconds WHERE phase_id = ?");
      left.bind(1, phase_id);
      if (left.step() && left.column_int(0) == 0 && result.status == PhaseStatus::completed) {
        result.status = PhaseStatus::failed;  // errors only, as the collector would have said
        result.error = "the server refused every set (" + std::to_string(refused) + ")";
      }
    }
  }
  writer.end_phase(phase_id, result.ended_ts_us, phase_status_name(result.status), result.totals,
                   rate_mode);
  if (result.status == PhaseStatus::failed) *error = label + ": " + result.error;
  if (result.status == PhaseStatus::interrupted) *error = "interrupted by signal";
  return result.status;
}

// Runs every step's phases against one target. Returns the status of the last phase run.
PhaseStatus run_target(const RunOptions& opts, const TargetSpec& spec, int64_t run_id, int ordinal,
                       ResultsWriter& writer, Database& db, Monitors& monitors, RunWatcher& watcher,
                       const ValueTable& values, const std::atomic<bool>& stop,
                       std::string* error) {
  std::vector<std::unique_ptr<StoreClient>> clients;
  int64_t target_id = 0;
  int phase_ordinal = 0;
  StoreStatsPoller stats(spec, 1'000'000, std::min<int64_t>(opts.client.timeout_us, 1'000'000));
  for (const RunStep& step : opts.steps) {
    const WorkloadSpec& w = step.workload;
    const auto wanted = static_cast<size_t>(w.threads * w.connections);
    if (clients.size() != wanted) {
      clients.clear();
      clients = connect_clients(spec, static_cast<int>(wanted), opts.client);
    }
    if (target_id == 0) {
      target_id = writer.add_target(run_id, ordinal, spec, clients.front()->server_version());
      stats.start();
    }
    PhaseSlot at{run_id,
                 target_id,
                 0,
                 step.name,
                 spec.display + (step.name.empty() ? "" : " [" + step.name + "]"),
                 &stats,
                 &monitors,
                 &db,
                 &watcher,
                 &spec};
    for (PhaseKind kind : w.phases) {
      at.ordinal = phase_ordinal++;
      PhaseStatus st = run_one_phase(opts, at, w, kind, clients, writer, values, stop, error);
      monitors.flush(db);  // nothing else flushes between phases
      if (st != PhaseStatus::completed) {
        stats.stop(st != PhaseStatus::interrupted);  // at Ctrl-C, do not wait on a stalled store
        writer.write_store_stats(target_id, stats.drain());
        return st;
      }
    }
  }
  stats.stop();  // keep what was gathered (the last poll is at most a second old)
  writer.write_store_stats(target_id, stats.drain());
  return PhaseStatus::completed;
}

}  // namespace

std::vector<TargetSpec> check_run_options(const RunOptions& opts) {
  check_results_path("--db", opts.db_path, false);
  std::vector<TargetSpec> specs;
  for (const auto& t : opts.targets) specs.push_back(parse_target_uri(t));
  for (const auto& step : opts.steps) {
    const WorkloadSpec& w = step.workload;
    for (const auto& spec : specs) {
      // A multi-get's replies come back server by server: matched to the gets in order, a
      // pool of several servers would need another way of pairing them.
      if (spec.protocol == Protocol::memcached && spec.servers.size() > 1 && w.pipeline > 1)
        throw std::invalid_argument(spec.display +
                                    ": --pipeline > 1 needs a single memcached "
                                    "server (a pool takes --pipeline 1; use --connections)");
    }
  }
  for (const auto& hp : opts.monitors) {
    auto parsed = proto::split_host_port(hp);
    if (!parsed)
      throw std::invalid_argument("invalid --monitor '" + hp + "': " + parsed.error().message);
  }
  if (!opts.monitor_token_file.empty() && opts.monitors.empty())
    throw std::invalid_argument("--monitor-token-file needs --monitor");
  read_monitor_token(opts.monitor_token_file);
  return specs;
}

int run_benchmark(const RunOptions& opts, const std::atomic<bool>& stop, std::ostream& out) {
  // Everything that can be checked is checked before the file is touched.
  std::vector<TargetSpec> specs = check_run_options(opts);
  uint64_t largest_value = 1;
  for (const auto& step : opts.steps)
    largest_value = std::max(largest_value, step.workload.values.largest());
  for (const auto& spec : specs) connect_clients(spec, 1, opts.client);

  // kvmon links are checked before the file is touched too (an unreachable one is an error).
  Monitors monitors(opts.monitors, opts.monitor_token_file, opts.monitor_optional);
  ValueTable values(largest_value, opts.steps.front().workload.seed);
  Database db = open_results_db(opts.db_path);
  ResultsWriter writer(db);
  RunInfo info{opts.name,      opts.command_line,  opts.steps.front().workload.to_json(),
               now_ts_us(),    opts.scenario,      opts.scale,
               opts.run_group, opts.process_index, opts.process_count};
  const int64_t run_id = writer.begin_run(info);
  log_info() << "run " << run_id << " recording into " << opts.db_path;
  RunWatcher watcher(stop, opts.db_path, run_id);

  std::string status = "completed";
  std::string error;
  try {
    for (size_t i = 0; i < specs.size() && status == "completed"; ++i) {
      PhaseStatus st = run_target(opts, specs[i], run_id, static_cast<int>(i), writer, db, monitors,
                                  watcher, values, stop, &error);
      if (st != PhaseStatus::completed) status = phase_status_name(st);
    }
  } catch (const std::exception& e) {
    status = "failed";
    error = e.what();
  }
  try {
    monitors.finish(db, now_ts_us());
  } catch (const std::exception& e) {
    log_error() << "could not write the last monitor samples: " << e.what();
  }
  if (status != "completed") {
    // A phase cut short by an exception (the disk filled, the file went away) was never ended:
    // mark it with the run, as far as the file still takes writes (an update needs little room;
    // if even that fails, the next open of the file marks it, see mark_abandoned).
    try {
      db.prepare(
            "UPDATE phases SET status = ?, ended_ts_us = COALESCE(ended_ts_us, ?) "
            "WHERE run_id = ? AND status = 'running'")
          .bind(1, status)
          .bind(2, now_ts_us())
          .bind(3, run_id)
          .run();
    } catch (const std::exception& e) {
      log_error() << "could not mark the phase left running in run " << run_id << ": " << e.what();
    }
  }
  try {
    writer.end_run(run_id, status, error);
  } catch (const std::exception& e) {
    log_error() << "could not record the end of run " << run_id << ": " << e.what();
  }
  if (opts.quiet) {
    // a group member: the parent prints the group's summary
  } else if (opts.json) {
    print_run_json(db, run_id, out);
  } else {
    out << "\n";
    // A run that did not complete says so before any figure (its table still shows req/s).
    if (status != "completed") {
      out << "run " << run_id << " " << (status == "failed" ? "FAILED" : status)
          << (error.empty() ? "" : ": " + error) << "\n\n";
    }
    print_run_summary(db, run_id, out);
    out << "\nresults: " << opts.db_path << " (run " << run_id << ", " << status << ")\n";
  }
  if (status == "failed") {
    log_error() << error;
    return kExitFailed;
  }
  return status == "interrupted" ? kExitInterrupted : kExitOk;
}

}  // namespace kv::drive

namespace kv::drive {

void leave_now_on_signal() noexcept {
  int fd = g_leave_fd.load();
  if (fd < 0) _exit(kExitInterrupted);
  char c = 1;
  if (write(fd, &c, 1) != 1) _exit(kExitInterrupted);
}

int run_process_group(const RunOptions& opts, int argc, char** argv, std::ostream& out) {
  // As in run_benchmark: bad options and unreachable stores stop the group before the file is
  // created, not in each process after it.
  for (const auto& spec : check_run_options(opts)) connect_clients(spec, 1, opts.client);
  open_results_db(opts.db_path);  // create and migrate once, before N processes race to
  // Exec the binary by its real path, so the processes are named kvdrive (the dead-writer check
  // in open_results_db looks at /proc/PID/comm).
  char self[4096] = {};
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) throw std::runtime_error("cannot find this kvdrive's own path (/proc/self/exe)");
  std::vector<pid_t> children;
  for (int i = 0; i < opts.process_count; ++i) {
    std::vector<std::string> args(argv, argv + argc);
    args.insert(args.end(), {"--run-group", opts.run_group, "--process-index", std::to_string(i)});
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0) throw std::runtime_error("fork failed");
    if (pid == 0) {
      execv(self, cargs.data());
      _exit(127);
    }
    children.push_back(pid);
  }
  log_info() << opts.process_count << " kvdrive processes running as group " << opts.run_group;
  int worst = kExitOk;
  std::vector<std::string> failures;  // one line per process that did not complete
  for (size_t i = 0; i < children.size(); ++i) {
    int status = 0;
    while (waitpid(children[i], &status, 0) < 0 && errno == EINTR) {
    }
    std::string who = "process " + std::to_string(i) + " of " + std::to_string(children.size()) +
                      " (pid " + std::to_string(children[i]) + ")";
    int code = kExitOk;
    if (WIFEXITED(status)) {
      code = WEXITSTATUS(status);
      if (code == kExitFailed)
        failures.push_back(who + " failed (exit 1): see its run's error");
      else if (code == kExitInterrupted)
        failures.push_back(who + " was interrupted");
      else if (code != kExitOk)
        failures.push_back(who + " exited with code " + std::to_string(code));
    } else {
      // Killed (kill -9, the OOM killer, a crash): its run is left running, which the open
      // below marks incomplete. The group failed.
      const int sig = WTERMSIG(status);
      failures.push_back(who + " was killed by signal " + std::to_string(sig) + " (" +
                         strsignal(sig) + "): its run is marked incomplete");
      code = kExitFailed;
    }
    if (code != kExitOk && (worst == kExitOk || code == kExitFailed)) worst = code;
  }
  Database db = open_results_db(opts.db_path);  // marks the runs of killed processes
  if (opts.json) {  // --json: the group's summary as JSON too, not the table
    for (const auto& f : failures) log_error() << f;
    print_group_json(db, opts.run_group, static_cast<int>(children.size()), failures, out);
    return worst;
  }
  out << "\n";
  if (!failures.empty()) {
    out << std::to_string(children.size() - failures.size()) << " of " << children.size()
        << " processes completed; " << failures.size() << " did not:\n";
    for (const auto& f : failures) {
      out << "  " << f << "\n";
      log_error() << f;
    }
    out << "\n";
  }
  print_group_summary(db, opts.run_group, out);
  out << "\nresults: " << opts.db_path << " (group " << opts.run_group << ")\n";
  return worst;
}

}  // namespace kv::drive
