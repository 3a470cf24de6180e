// Stores kvmon's rows in the results file: one monitor_sessions row per run, then one short
// write transaction per Batch. Owns its Database; one thread uses a SqliteSink. SQLITE_BUSY from
// another writer (kvdrive) is waited out by WriteTransaction; other failures throw SqliteError.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "records.hpp"

namespace kv::mon {

struct SessionInfo {
  std::string host;
  int64_t started_ts_us = 0;
  int64_t interval_us = 0;
  int64_t kvmon_pid = 0;
  std::string command_line;
};

class SqliteSink {
 public:
  // Opens (creating and migrating) the results file and inserts the session row (status
  // 'running'). Throws on failure.
  SqliteSink(const std::string& db_path, const SessionInfo& session);

  int64_t session_id() const { return session_id_; }
  // Writes one tick's rows in one transaction; on failure nothing of the batch is stored.
  void write(const Batch& batch);
  // Writes several ticks' rows in one transaction (cheaper: the pages they share are written
  // once); on failure nothing of them is stored.
  void write(std::span<const Batch> batches);
  int64_t interval_us() const { return interval_us_; }
  // Sets the session's status ('completed', 'interrupted', 'failed', 'incomplete') and
  // ended_ts_us.
  void finish(const std::string& status, int64_t ended_ts_us);
  // Whether the results file's path no longer names the file opened ("deleted", "replaced by
  // another file"); nullopt while it does. One stat(2): call it once per flush, not per row.
  std::optional<std::string> file_gone() const;
  // Closes the file and opens (creating and migrating) the one now at the path, with a new
  // session row started at now_ts_us. Throws on failure; then write() and finish() throw until
  // a reopen succeeds.
  void reopen(int64_t now_ts_us);
  const std::string& path() const { return path_; }

 private:
  void open_and_begin_session(int64_t started_ts_us);
  void write_rows(const Batch& batch);
  void touch_instances();
  // The row id of instance `key`, inserting its row first if needed; nullopt if never announced.
  std::optional<int64_t> instance_id(const ProcessKey& key);
  int64_t insert_instance(const InstanceRecord& r);
  void insert_process_sample(int64_t instance_id, const ProcessSample& s);
  void insert_host_sample(const HostSample& h);
  void insert_event(const EventRecord& e);
  // The statement for `sql`, prepared on first use and kept: preparing costs more than the
  // insert (see bench/kvmon_cost.sh).
  Statement& cached(std::optional<Statement>& slot, const char* sql);

  std::string path_;
  SessionInfo session_;
  std::optional<Database> db_;                      // empty after a reopen that failed
  std::optional<std::pair<dev_t, ino_t>> file_id_;  // of the file opened at path_
  std::string host_;
  int64_t session_id_ = 0;
  int64_t interval_us_ = 0;
  std::map<int64_t, int64_t> last_seen_;  // instance id -> latest sample ts_us of this write
  std::map<ProcessKey, InstanceRecord> instances_;  // every instance announced by a Batch
  std::map<ProcessKey, int64_t> instance_ids_;      // those stored, with their row ids
  std::vector<ProcessKey> inserted_;                // stored by the batch being written
  // Prepared statements (declared after db_: finalized before it closes).
  std::optional<Statement> insert_instance_, insert_process_sample_, touch_instance_,
      insert_host_sample_, insert_disk_sample_, insert_event_;
};

}  // namespace kv::mon
