#include "sqlite_sink.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include "kvbench/log.hpp"
#include "kvbench/samples.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/version.hpp"

namespace kv::mon {

SqliteSink::SqliteSink(const std::string& db_path, const SessionInfo& session)
    : path_(db_path), session_(session), host_(session.host), interval_us_(session.interval_us) {
  open_and_begin_session(session.started_ts_us);
}

void SqliteSink::open_and_begin_session(int64_t started_ts_us) {
  db_.emplace(open_results_db(path_));
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) file_id_ = {st.st_dev, st.st_ino};
  WriteTransaction tx(*db_);
  db_->prepare(
         "INSERT INTO monitor_sessions (host, started_ts_us, status, kvmon_version, kvmon_pid, "
         "interval_us, command_line) VALUES (?, ?, 'running', ?, ?, ?, ?)")
      .bind(1, session_.host)
      .bind(2, started_ts_us)
      .bind(3, version())
      .bind(4, session_.kvmon_pid)
      .bind(5, session_.interval_us)
      .bind(6, session_.command_line)
      .run();
  session_id_ = db_->last_insert_rowid();
  tx.commit();
}

std::optional<std::string> SqliteSink::file_gone() const {
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) {
    if (errno == ENOENT) return "deleted";
    return std::nullopt;  // unreadable for a moment (e.g. a directory's permission): not gone
  }
  if (file_id_ && (st.st_dev != file_id_->first || st.st_ino != file_id_->second)) {
    return "replaced by another file";
  }
  return std::nullopt;
}

void SqliteSink::reopen(int64_t now_ts_us) {
  // The old connection closes first: it checkpoints into the deleted file and removes the -wal
  // beside it, which would otherwise be taken for the new file's.
  insert_instance_.reset();
  insert_process_sample_.reset();
  touch_instance_.reset();
  insert_host_sample_.reset();
  insert_disk_sample_.reset();
  insert_event_.reset();
  db_.reset();
  file_id_.reset();
  instance_ids_.clear();  // instances are inserted again, on demand, in the new file
  open_and_begin_session(now_ts_us);
}

Statement& SqliteSink::cached(std::optional<Statement>& slot, const char* sql) {
  if (!slot) slot.emplace(db_->prepare(sql));
  return *slot;
}

int64_t SqliteSink::insert_instance(const InstanceRecord& r) {
  std::optional<int64_t> parent_id;
  if (r.parent) parent_id = instance_id(*r.parent);
  cached(insert_instance_,
         "INSERT INTO process_instances (session_id, host, pid, start_ticks, started_ts_us, name, "
         "command_line, selector, parent_instance_id, first_seen_ts_us, last_seen_ts_us) "
         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, session_id_)
      .bind(2, host_)
      .bind(3, static_cast<int64_t>(r.key.pid))
      .bind(4, r.key.start_ticks)
      .bind(5, r.started_ts_us)
      .bind(6, r.name)
      .bind(7, r.command_line)
      .bind(8, r.selector)
      .bind(9, parent_id)
      .bind(10, r.first_seen_ts_us)
      .bind(11, r.first_seen_ts_us)
      .run();
  int64_t id = db_->last_insert_rowid();
  instance_ids_[r.key] = id;
  inserted_.push_back(r.key);
  return id;
}

void SqliteSink::insert_process_sample(int64_t instance_id, const ProcessSample& s) {
  static const std::string sql =
      insert_sql(kProcessTable, {"instance_id", "ts_us", "scheduled_ts_us"});
  Statement& st = cached(insert_process_sample_, sql.c_str());
  st.bind(1, instance_id).bind(2, s.ts_us).bind(3, s.scheduled_ts_us);
  bind_fields(st, 4, kProcessTable, s);
  st.run();
  int64_t& last = last_seen_[instance_id];
  last = std::max(last, s.ts_us);
}

// last_seen_ts_us once per instance and transaction, not once per sample.
void SqliteSink::touch_instances() {
  for (auto [id, ts_us] : last_seen_) {
    cached(touch_instance_,
           "UPDATE process_instances SET last_seen_ts_us = ? WHERE instance_id = ?")
        .bind(1, ts_us)
        .bind(2, id)
        .run();
  }
  last_seen_.clear();
}

void SqliteSink::insert_host_sample(const HostSample& h) {
  static const std::string sql = insert_sql(kHostTable, {"session_id", "ts_us", "scheduled_ts_us"});
  Statement& st = cached(insert_host_sample_, sql.c_str());
  st.bind(1, session_id_).bind(2, h.ts_us).bind(3, h.scheduled_ts_us);
  bind_fields(st, 4, kHostTable, h);
  st.run();

  static const std::string disk_sql = insert_sql(kDiskTable, {"session_id", "ts_us"});
  Statement& disk = cached(insert_disk_sample_, disk_sql.c_str());
  for (const DiskStat& d : h.disks) {
    disk.bind(1, session_id_).bind(2, h.ts_us);
    bind_fields(disk, 3, kDiskTable, d);
    disk.run();
  }
}

void SqliteSink::insert_event(const EventRecord& e) {
  std::optional<int64_t> id;
  if (e.instance) id = instance_id(*e.instance);
  cached(insert_event_,
         "INSERT INTO events (ts_us, source, session_id, instance_id, kind, message) "
         "VALUES (?, 'kvmon', ?, ?, ?, ?)")
      .bind(1, e.ts_us)
      .bind(2, session_id_)
      .bind(3, id)
      .bind(4, e.kind)
      .bind(5, e.message)
      .run();
}

void SqliteSink::write(const Batch& batch) { write(std::span<const Batch>(&batch, 1)); }

void SqliteSink::write(std::span<const Batch> batches) {
  for (const Batch& batch : batches) {
    for (const InstanceRecord& r : batch.new_instances) instances_.emplace(r.key, r);
  }
  if (!db_) throw std::runtime_error("the results file " + path_ + " is not open");
  inserted_.clear();
  last_seen_.clear();
  try {
    WriteTransaction tx(*db_);
    for (const Batch& batch : batches) write_rows(batch);
    touch_instances();
    tx.commit();
  } catch (...) {
    // Rolled back: those instances are inserted again with the next batch that needs them.
    for (const ProcessKey& key : inserted_) instance_ids_.erase(key);
    throw;
  }
}

std::optional<int64_t> SqliteSink::instance_id(const ProcessKey& key) {
  if (auto it = instance_ids_.find(key); it != instance_ids_.end()) return it->second;
  auto rec = instances_.find(key);
  if (rec == instances_.end()) return std::nullopt;
  return insert_instance(rec->second);
}

void SqliteSink::write_rows(const Batch& batch) {
  for (const InstanceRecord& r : batch.new_instances) (void)instance_id(r.key);
  for (const ProcessSample& s : batch.processes) {
    if (auto id = instance_id(s.key)) {
      insert_process_sample(*id, s);
    } else {
      log_error() << "internal: sample of unrecorded process " << to_string(s.key);
    }
  }
  if (batch.host) insert_host_sample(*batch.host);
  for (const EventRecord& e : batch.events) insert_event(e);
}

void SqliteSink::finish(const std::string& status, int64_t ended_ts_us) {
  if (!db_) throw std::runtime_error("the results file " + path_ + " is not open");
  WriteTransaction tx(*db_);
  db_->prepare("UPDATE monitor_sessions SET status = ?, ended_ts_us = ? WHERE session_id = ?")
      .bind(1, status)
      .bind(2, ended_ts_us)
      .bind(3, session_id_)
      .run();
  tx.commit();
}

}  // namespace kv::mon
