#include "kvbench/recovery.hpp"

#include <signal.h>

#include <cerrno>
#include <fstream>
#include <string>
#include <vector>

#include "kvbench/log.hpp"
#include "kvbench/version.hpp"

namespace kv {
namespace {

// True if `pid` is a live kvdrive or kvmon (a reused pid running something else is not).
bool writer_alive(int64_t pid, const char* program) {
  if (pid <= 0 || ::kill(static_cast<pid_t>(pid), 0) != 0) return errno == EPERM;
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  std::getline(comm, name);
  return name == program;
}

struct Open {
  int64_t id;
  int64_t pid;
};

std::vector<Open> open_rows(Database& db, const char* sql) {
  std::vector<Open> rows;
  auto s = db.prepare(sql);
  s.bind(1, host_name());
  while (s.step()) rows.push_back({s.column_int(0), s.column_int(1)});
  return rows;
}

}  // namespace

int mark_abandoned(Database& db) {
  auto runs = open_rows(db, "SELECT run_id, client_pid FROM runs WHERE status = 'running' AND client_host = ?");
  auto sessions = open_rows(
      db, "SELECT session_id, kvmon_pid FROM monitor_sessions WHERE status = 'running' AND host = ? "
          "AND link IS NULL");  // linked sessions are kvdrive's, and end with its run
  int marked = 0;
  WriteTransaction tx(db);
  for (const auto& r : runs) {
    if (writer_alive(r.pid, "kvdrive")) continue;
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
  for (const auto& s : sessions) {
    if (writer_alive(s.pid, "kvmon")) continue;
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
