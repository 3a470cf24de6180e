#include "kvbench/recovery.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "kvbench/log.hpp"
#include "kvbench/version.hpp"

namespace kv {
namespace {

// The machine's boot time in µs of the wall clock (/proc/stat btime: whole seconds).
std::optional<int64_t> boot_time_us() {
  std::ifstream host("/proc/stat");
  for (std::string l; std::getline(host, l);)
    if (l.rfind("btime ", 0) == 0) return std::stoll(l.substr(6)) * 1'000'000;
  return std::nullopt;
}

// When `pid` started, in µs of the wall clock (boot time + its start after boot); nullopt when
// its /proc files cannot be read.
std::optional<int64_t> process_start_us(int64_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return std::nullopt;
  const auto close = line.rfind(')');  // the name may hold spaces and parentheses
  if (close == std::string::npos) return std::nullopt;
  std::istringstream fields(line.substr(close + 2));  // from field 3, state
  std::string field;
  for (int i = 3; i <= 22; ++i)  // field 22: starttime, in clock ticks after boot
    if (!(fields >> field)) return std::nullopt;
  const long ticks = ::sysconf(_SC_CLK_TCK);
  const auto boot = boot_time_us();
  if (ticks <= 0 || !boot) return std::nullopt;
  return *boot + std::stoll(field) * 1'000'000 / ticks;
}

// True if `pid` may still be the writer of a row opened at `row_start_us`: a live process that
// started before the row (boot time has whole seconds: 2 s of slack), whatever its name, so a
// renamed or versioned kvdrive binary keeps its run; or one running `program` (its start can
// look later than the row's once the wall clock was stepped). A pid reused by another program
// started after the row began: its writer is gone.
bool writer_alive(int64_t pid, int64_t row_start_us, const char* program) {
  if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) != 0) return errno == EPERM;
  const auto started = process_start_us(pid);
  if (!started || *started <= row_start_us + 2'000'000) return true;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name == program;
}

struct Open {
  int64_t id;
  int64_t pid;
  int64_t started_us;
};

std::vector<Open> open_rows(Database& db, const char* sql) {
  std::vector<Open> rows;
  auto s = db.prepare(sql);
  s.bind(1, host_name());
  while (s.step()) rows.push_back({s.column_int(0), s.column_int(1), s.column_int(2)});
  return rows;
}

}  // namespace

// Status changes outside kvdrive's ResultsWriter, on purpose: this runs at open, in kvmon as in
// kvdrive (common/ knows no writer of either), for rows whose writer is gone.
int mark_abandoned(Database& db) {
  auto runs =
      open_rows(db,
                "SELECT run_id, client_pid, started_ts_us FROM runs WHERE status = 'running' AND "
                "client_host = ?");
  auto sessions = open_rows(
      db,
      "SELECT session_id, kvmon_pid, started_ts_us FROM monitor_sessions WHERE status = 'running' "
      "AND host = ? "
      "AND link IS NULL");  // linked sessions are kvdrive's, and end with its run
  int marked = 0;
  WriteTransaction tx(db);
  for (const auto& r : runs) {
    if (writer_alive(r.pid, r.started_us, "kvdrive")) continue;
    db.prepare(
          "UPDATE runs SET status = 'incomplete', error = 'kvdrive (pid ' || client_pid || ') "
          "ended without closing the run', ended_ts_us = (SELECT MAX(d.ts_us + d.interval_us) "
          "FROM driver_seconds d JOIN phases p USING (phase_id) WHERE p.run_id = runs.run_id) "
          "WHERE run_id = ? AND status = 'running'")
        .bind(1, r.id)
        .run();
    db.prepare("UPDATE phases SET status = 'incomplete' WHERE run_id = ? AND status = 'running'")
        .bind(1, r.id)
        .run();
    log_warn() << db.path() << ": run " << r.id << " was left running by kvdrive pid " << r.pid
               << ", which is gone: marked incomplete";
    ++marked;
  }
  // A phase left running under a run that ended (kvdrive recorded the run's end but could not
  // end the phase, e.g. the disk was full): it ended with its run, as the run did. Needs no
  // liveness check: a live kvdrive ends its phases before its run.
  {
    auto orphans = db.prepare(
        "SELECT p.phase_id, r.run_id, r.status FROM phases p JOIN runs r USING (run_id) "
        "WHERE p.status = 'running' AND r.status <> 'running'");
    std::vector<std::pair<int64_t, std::string>> ended;
    while (orphans.step()) ended.emplace_back(orphans.column_int(0), orphans.column_text(2));
    for (const auto& [phase_id, run_status] : ended) {
      const std::string status = run_status == "completed" ? "incomplete" : run_status;
      db.prepare(
            "UPDATE phases SET status = ?, ended_ts_us = COALESCE(ended_ts_us, (SELECT "
            "MAX(d.ts_us + d.interval_us) FROM driver_seconds d WHERE d.phase_id = "
            "phases.phase_id), "
            "started_ts_us) WHERE phase_id = ? AND status = 'running'")
          .bind(1, status)
          .bind(2, phase_id)
          .run();
      log_warn() << db.path() << ": phase " << phase_id << " was left running in a run that ended "
                 << run_status << ": marked " << status;
      ++marked;
    }
  }
  for (const auto& s : sessions) {
    if (writer_alive(s.pid, s.started_us, "kvmon")) continue;
    db.prepare(
          "UPDATE monitor_sessions SET status = 'incomplete', ended_ts_us = (SELECT MAX(ts_us) "
          "FROM host_samples h WHERE h.session_id = monitor_sessions.session_id) "
          "WHERE session_id = ? AND status = 'running'")
        .bind(1, s.id)
        .run();
    log_warn() << db.path() << ": monitor session " << s.id << " was left running by kvmon pid "
               << s.pid << ", which is gone: marked incomplete";
    ++marked;
  }
  tx.commit();
  return marked;
}

}  // namespace kv
