#include "run/process_group.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <map>
#include <stdexcept>
#include <string_view>
#include <thread>

#include "engine/loop/event_client.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"
#include "run/phase_barrier.hpp"
#include "run/run_watcher.hpp"
#include "search/search_group.hpp"
#include "stats/hdr_log.hpp"
#include "store/target_uri.hpp"

namespace kv::drive {
namespace {

// A start that failed part-way: closes the pipe ends made so far (`fds`, -1 for none, and the
// parent's ends of the processes started) and kills and reaps those processes, which would
// otherwise run on unwatched; then throws `what` with errno's text.
[[noreturn]] void abandon_start(const std::string& what, std::initializer_list<int> fds,
                                const std::vector<FollowerPipes>& followers,
                                const std::vector<pid_t>& children) {
  const int err = errno;
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
  for (const auto& f : followers) {
    ::close(f.to_child);
    ::close(f.from_child);
  }
  for (pid_t pid : children) ::kill(pid, SIGKILL);
  for (pid_t pid : children) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  throw std::runtime_error(what + ": " + std::strerror(err));
}

// The processes' environment: this one's, and each target's password (kept out of their argv).
std::vector<std::string> process_environment(const RunOptions& opts) {
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::string_view(*e).rfind("KVDRIVE_TARGET_PASSWORD_", 0) != 0)
      env_strings.emplace_back(*e);
  for (size_t t = 0; t < opts.targets.size(); ++t) {
    const std::string password = parse_target_uri(opts.targets[t]).password;
    if (!password.empty()) env_strings.push_back(target_password_env(t) + "=" + password);
  }
  return env_strings;
}

// Process i's command line: this one's, less what the parent writes (--json-out, --hdr-log)
// and any password, plus its place in the group.
std::vector<std::string> process_args(const RunOptions& opts, int argc, char** argv, int i) {
  // --json-out is the parent's to write (the group's document); a process writes only its rows
  // (left out here so its command line does not name it; one from a --config file the
  // processes read too is dropped by the process itself, given --process-index).
  std::vector<std::string> args;
  for (int a = 0; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--json-out" && a + 1 < argc) {
      ++a;
      continue;
    }
    if (arg.rfind("--json-out=", 0) == 0) continue;
    // --hdr-log likewise: the parent writes the group's logs (write_group_hdr_logs; a
    // process of a group ignores one from a --config file).
    if (arg == "--hdr-log" && a + 1 < argc) {
      ++a;
      continue;
    }
    if (arg.rfind("--hdr-log=", 0) == 0) continue;
    // Passwords never reach a process's argv (every user of the host can read it): a URI's
    // and memtier's -a go through its environment (target_password_env), read and cleared
    // at its start.
    if ((arg == "-a" || arg == "--authenticate") && a + 1 < argc) {
      ++a;
      continue;
    }
    if (arg.rfind("--authenticate=", 0) == 0) continue;
    args.push_back(strip_uri_passwords(arg));
  }
  args.insert(args.end(), {"--run-group", opts.run_group, "--process-index", std::to_string(i)});
  return args;
}

// Waits for every process (passing a stop on to those still running, and the phase barrier's
// lines meanwhile); each that did not complete gets a line in *failures. Returns the group's
// exit code: 1 when any failed, else the first other one not 0 (130: interrupted), else 0.
int reap_processes(const std::vector<pid_t>& children, PhaseBarrierLeader& barrier,
                   const std::atomic<bool>& stop, std::vector<std::string>* failures) {
  int worst = kExitOk;
  bool told_stop = false;
  for (size_t i = 0; i < children.size(); ++i) {
    int status = 0;
    // Polled, so that a SIGINT/SIGTERM to this process alone reaches the processes still
    // running (a terminal's Ctrl-C reaches them itself; they take the signal as a first one).
    for (;;) {
      const pid_t done = waitpid(children[i], &status, WNOHANG);
      if (done == children[i] || (done < 0 && errno != EINTR)) break;
      if (stop.load() && !told_stop) {
        told_stop = true;
        for (size_t j = i; j < children.size(); ++j) ::kill(children[j], kGroupStopSignal);
      }
      barrier.poll(50);  // a sleep of 50 ms, or less when a process says it is ready
    }
    std::string who = "process " + std::to_string(i) + " of " + std::to_string(children.size()) +
                      " (pid " + std::to_string(children[i]) + ")";
    int code = kExitOk;
    if (WIFEXITED(status)) {
      code = WEXITSTATUS(status);
      if (code == kExitFailed)
        failures->push_back(who + " failed (exit 1): see its run's error");
      else if (code == kExitInterrupted)
        failures->push_back(who + " was interrupted");
      else if (code != kExitOk)
        failures->push_back(who + " exited with code " + std::to_string(code));
    } else {
      // Killed (kill -9, the OOM killer, a crash): its run is left running, which the open
      // below marks incomplete. The group failed.
      const int sig = WTERMSIG(status);
      failures->push_back(who + " was killed by signal " + std::to_string(sig) + " (" +
                          strsignal(sig) + "): its run is marked incomplete");
      code = kExitFailed;
    }
    if (code != kExitOk && (worst == kExitOk || code == kExitFailed)) worst = code;
  }
  return worst;
}

// --hdr-log: the group's logs. The runs are recorded whatever happens here: a log that cannot
// be written fails the group (exit 1, as a --json-out that cannot be written does) but does not
// skip its summary, as an exception out of here would.
void write_group_logs(const RunOptions& opts, GroupRecord& record) {
  if (opts.hdr_log_prefix.empty()) return;
  try {
    write_group_hdr_logs(record.db, opts.run_group, opts.hdr_log_prefix);
  } catch (const std::exception& e) {
    log_error() << "--hdr-log: the group's HdrHistogram logs: " << e.what();
    if (record.exit_code == kExitOk) record.exit_code = kExitFailed;
  }
}

}  // namespace

GroupRecord run_process_group(const RunOptions& opts, int argc, char** argv,
                              const std::atomic<bool>& stop) {
  // As in run_benchmark: bad options and unreachable stores stop the group before the file is
  // created, not in each process after it.
  for (const auto& spec : check_run_options(opts)) connect_event_clients(spec, 1, opts.client);
  open_results_db(opts.db_path);  // create and migrate once, before N processes race to
  // Exec the binary by its real path, so the processes are named kvdrive (the dead-writer check
  // in open_results_db looks at /proc/PID/comm).
  char self[4096] = {};
  ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  if (len <= 0) throw std::runtime_error("cannot find this kvdrive's own path (/proc/self/exe)");
  // The processes' environment: this one's, and each target's password (made before the fork:
  // a child of a threaded parent may not allocate before exec).
  std::vector<std::string> env_strings = process_environment(opts);
  std::vector<char*> envp;
  for (auto& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::vector<pid_t> children;
  std::vector<FollowerPipes> followers;  // --search: the parent's ends of each process's pipes
  PhaseBarrierLeader barrier;            // otherwise: each phase starts in every process at once
  for (int i = 0; i < opts.process_count; ++i) {
    std::vector<std::string> args = process_args(opts, argc, argv, i);
    // --search: the parent decides each step (lead_search); the process reads rates on one pipe
    // and reports each step on another. Every end is close-on-exec but the process's own two.
    // The phase barrier's "ready" and "go" (run/phase_barrier.hpp) go over the same two pipes,
    // with --search for the phases before its steps.
    int rates[2] = {-1, -1}, reports[2] = {-1, -1};
    if (::pipe2(rates, O_CLOEXEC) != 0 || ::pipe2(reports, O_CLOEXEC) != 0)
      abandon_start("cannot make a pipe", {rates[0], rates[1], reports[0], reports[1]}, followers,
                    children);
    args.insert(args.end(), {opts.search.enabled ? "--search-follow" : "--phase-barrier",
                             std::to_string(rates[0]) + "," + std::to_string(reports[1])});
    std::vector<char*> cargs;
    for (auto& a : args) cargs.push_back(a.data());
    cargs.push_back(nullptr);
    pid_t pid = fork();
    if (pid < 0)
      abandon_start("fork failed", {rates[0], rates[1], reports[0], reports[1]}, followers,
                    children);
    if (pid == 0) {
      ::fcntl(rates[0], F_SETFD, 0);
      ::fcntl(reports[1], F_SETFD, 0);
      execve(self, cargs.data(), envp.data());
      _exit(127);
    }
    children.push_back(pid);
    ::close(rates[0]);
    ::close(reports[1]);
    if (opts.search.enabled)
      followers.push_back({rates[1], reports[0], pid});
    else
      barrier.add(reports[0], rates[1]);
  }
  log_info() << opts.process_count << " kvdrive processes running as group " << opts.run_group;
  bool search_ok = true;
  if (opts.search.enabled) {
    // Returns once the search is over or a process stopped: its pipes closed, each process
    // ends its run and exits.
    try {
      search_ok =
          lead_search(opts.search, opts.db_path, opts.targets.front(), std::move(followers), stop);
    } catch (const std::exception& e) {
      log_error() << "--search: " << e.what();
      search_ok = false;
    }
  }
  std::vector<std::string> failures;  // one line per process that did not complete
  int worst = reap_processes(children, barrier, stop, &failures);
  // A search the parent could not finish fails the group even when every process ended well
  // (they end on the closed pipe), as it fails the run of a single process.
  if (!search_ok && worst == kExitOk) worst = stop.load() ? kExitInterrupted : kExitFailed;
  GroupRecord record{worst, static_cast<int>(children.size()), std::move(failures),
                     open_results_db(opts.db_path)};  // marks the runs of killed processes
  write_group_logs(opts, record);
  return record;
}

void write_group_hdr_logs(Database& db, const std::string& run_group, const std::string& prefix) {
  auto base = db.prepare(
      "SELECT MIN(started_ts_us), group_concat(run_id, ' ') FROM runs "
      "WHERE run_group = ?");
  base.bind(1, run_group);
  if (!base.step() || base.is_null(0)) return;  // no process got as far as its run
  const int64_t base_ts_us = base.column_int(0);
  const std::string runs = base.column_text(1);
  auto targets = db.prepare(
      "SELECT t.ordinal, MIN(t.uri) FROM targets t JOIN runs r ON r.run_id = t.run_id "
      "WHERE r.run_group = ? GROUP BY t.ordinal ORDER BY t.ordinal");
  targets.bind(1, run_group);
  while (targets.step()) {
    const int ordinal = static_cast<int>(targets.column_int(0));
    HdrLogWriter log(hdr_log_path(prefix, ordinal), base_ts_us);
    log.comment("[kvdrive run group " + run_group + " (runs " + runs + "), target " +
                std::to_string(ordinal) + ": " + targets.column_text(1) +
                "; each interval the sum of the processes' second]");
    auto phases = db.prepare(
        "SELECT p.ordinal, MIN(p.name), group_concat(p.phase_id, ' '), MIN(p.started_ts_us), "
        "MAX(p.rate IS NOT NULL), group_concat(p.phase_id, ', ') FROM phases p JOIN targets t ON "
        "t.target_id = p.target_id "
        "JOIN runs r ON r.run_id = t.run_id WHERE r.run_group = ? AND t.ordinal = ? "
        "GROUP BY p.ordinal ORDER BY p.ordinal");
    phases.bind(1, run_group).bind(2, ordinal);
    while (phases.step()) {
      const std::string ids = phases.column_text(2);
      const std::string in_list = phases.column_text(5);  // integers from the file: safe in SQL
      const bool rate_mode = phases.column_int(4) != 0;
      log.comment("[Phase " + phases.column_text(1) + ": phase_id " + ids + ", started " +
                  std::to_string(phases.column_int(3)) + " us since epoch]");
      // Each wall second and op the processes sent: its span over them and its largest max.
      auto seconds = db.prepare(
          "SELECT ts_us / 1000000, op, MIN(ts_us), MAX(ts_us + interval_us), "
          "MAX(lat_max_us), MAX(uncorrected_max_us) FROM driver_seconds WHERE phase_id IN (" +
          in_list + ") GROUP BY 1, 2 ORDER BY 1, 2 DESC");
      auto buckets = db.prepare(
          "SELECT upper_us, SUM(count) FROM second_latency_buckets WHERE phase_id IN (" + in_list +
          ") AND ts_us >= ?1 * 1000000 AND ts_us < (?1 + 1) * 1000000 AND op = ?2 "
          "AND timing = ?3 GROUP BY upper_us");
      while (seconds.step()) {
        const std::string op = seconds.column_text(1);
        const int64_t start = seconds.column_int(2), end = seconds.column_int(3);
        for (const bool sent : {false, true}) {
          if (sent && !rate_mode) break;
          // Closed loop: 'sent' under tag OP; rate mode: 'intended' as OP, 'sent' as OP-sent.
          const char* timing = rate_mode && !sent ? "intended" : "sent";
          const int max_col = sent ? 5 : 4;
          // No max recorded (NULL): the buckets' own upper bounds stand, unclamped.
          const uint64_t max_ns =
              seconds.is_null(max_col)
                  ? std::numeric_limits<uint64_t>::max()
                  : static_cast<uint64_t>(std::llround(seconds.column_double(max_col) * 1000));
          LatencyHistogram h;
          buckets.reset();
          buckets.bind(1, seconds.column_int(0)).bind(2, op).bind(3, timing);
          while (buckets.step()) {
            const auto upper_ns =
                static_cast<uint64_t>(std::llround(buckets.column_double(0) * 1000));
            h.record_n(std::min(upper_ns, max_ns), static_cast<uint64_t>(buckets.column_int(1)));
          }
          log.interval(sent ? op + "-sent" : op, start, end - start, h);
        }
      }
    }
  }
}

}  // namespace kv::drive
