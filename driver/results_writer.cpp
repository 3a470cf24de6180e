#include "results_writer.hpp"

#include <unistd.h>

#include "kvbench/clock.hpp"
#include "kvbench/version.hpp"

namespace kv::drive {
namespace {
std::optional<double> us_or_null(uint64_t ops, double ns) {
  if (ops == 0) return std::nullopt;
  return ns / 1000.0;
}
}  // namespace

int64_t ResultsWriter::begin_run(const RunInfo& info) {
  WriteTransaction tx(db_);
  db_.prepare(
         "INSERT INTO runs(name, started_ts_us, status, command_line, kvdrive_version, "
         "client_host, client_pid, parameters) VALUES (?, ?, 'running', ?, ?, ?, ?, ?)")
      .bind(1, info.name.empty() ? std::optional<std::string>() : info.name)
      .bind(2, info.started_ts_us)
      .bind(3, info.command_line)
      .bind(4, version())
      .bind(5, host_name())
      .bind(6, static_cast<int64_t>(getpid()))
      .bind(7, info.parameters_json)
      .run();
  int64_t id = db_.last_insert_rowid();
  tx.commit();
  return id;
}

void ResultsWriter::end_run(int64_t run_id, const std::string& status, const std::string& error) {
  WriteTransaction tx(db_);
  db_.prepare("UPDATE runs SET status = ?, ended_ts_us = ?, error = ? WHERE run_id = ?")
      .bind(1, status)
      .bind(2, now_ts_us())
      .bind(3, error.empty() ? std::optional<std::string>() : error)
      .bind(4, run_id)
      .run();
  tx.commit();
}

int64_t ResultsWriter::add_target(int64_t run_id, int ordinal, const TargetSpec& spec,
                                  const std::string& server_version) {
  WriteTransaction tx(db_);
  db_.prepare(
         "INSERT INTO targets(run_id, ordinal, uri, protocol, server_version) VALUES (?,?,?,?,?)")
      .bind(1, run_id)
      .bind(2, ordinal)
      .bind(3, spec.display)
      .bind(4, protocol_name(spec.protocol))
      .bind(5, server_version.empty() ? std::optional<std::string>() : server_version)
      .run();
  int64_t id = db_.last_insert_rowid();
  tx.commit();
  return id;
}

int64_t ResultsWriter::begin_phase(int64_t run_id, int64_t target_id, int ordinal,
                                   const std::string& kind, int64_t started_ts_us, int threads,
                                   int connections, std::optional<int64_t> requests) {
  WriteTransaction tx(db_);
  db_.prepare(
         "INSERT INTO phases(run_id, target_id, ordinal, name, kind, started_ts_us, threads, "
         "connections, requests) VALUES (?,?,?,?,?,?,?,?,?)")
      .bind(1, run_id)
      .bind(2, target_id)
      .bind(3, ordinal)
      .bind(4, kind)
      .bind(5, kind)
      .bind(6, started_ts_us)
      .bind(7, threads)
      .bind(8, connections)
      .bind(9, requests)
      .run();
  int64_t id = db_.last_insert_rowid();
  tx.commit();
  return id;
}

void ResultsWriter::write_second(int64_t phase_id, int64_t ts_us, int64_t interval_us,
                                 const IntervalStats& stats) {
  WriteTransaction tx(db_);
  auto ins = db_.prepare(
      "INSERT INTO driver_seconds(phase_id, ts_us, interval_us, op, ops, bytes_out, bytes_in, "
      "hits, misses, errors, timeouts, lat_mean_us, lat_p50_us, lat_p90_us, lat_p99_us, "
      "lat_p999_us, lat_max_us) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (OpType op : {OpType::set, OpType::get}) {
    const OpStats& s = stats[op];
    if (s.ops == 0) continue;  // an op type the phase does not send
    const auto& h = s.latency;
    auto pct = [&](double q) { return us_or_null(s.ops, static_cast<double>(h.percentile_ns(q))); };
    ins.bind(1, phase_id)
        .bind(2, ts_us)
        .bind(3, interval_us)
        .bind(4, op_name(op))
        .bind(5, static_cast<int64_t>(s.ops))
        .bind(6, static_cast<int64_t>(s.bytes_out))
        .bind(7, static_cast<int64_t>(s.bytes_in))
        .bind(8, static_cast<int64_t>(s.hits))
        .bind(9, static_cast<int64_t>(s.misses))
        .bind(10, static_cast<int64_t>(s.errors))
        .bind(11, static_cast<int64_t>(s.timeouts))
        .bind(12, us_or_null(s.ops, h.mean_ns()))
        .bind(13, pct(0.5))
        .bind(14, pct(0.9))
        .bind(15, pct(0.99))
        .bind(16, pct(0.999))
        .bind(17, us_or_null(s.ops, static_cast<double>(h.max_ns())))
        .run();
  }
  tx.commit();
}

void ResultsWriter::end_phase(int64_t phase_id, int64_t ended_ts_us, const std::string& status,
                              const IntervalStats& totals) {
  WriteTransaction tx(db_);
  db_.prepare("UPDATE phases SET ended_ts_us = ?, status = ? WHERE phase_id = ?")
      .bind(1, ended_ts_us)
      .bind(2, status)
      .bind(3, phase_id)
      .run();
  auto ins = db_.prepare(
      "INSERT INTO latency_buckets(phase_id, op, upper_us, count) VALUES (?, ?, ?, ?)");
  for (OpType op : {OpType::set, OpType::get}) {
    const LatencyHistogram& h = totals[op].latency;
    for (int i = 0; i < LatencyHistogram::kBuckets; ++i) {
      if (h.bucket_count(i) == 0) continue;
      ins.bind(1, phase_id)
          .bind(2, op_name(op))
          .bind(3, static_cast<double>(LatencyHistogram::bucket_upper_ns(i)) / 1000.0)
          .bind(4, static_cast<int64_t>(h.bucket_count(i)))
          .run();
    }
  }
  tx.commit();
}

void ResultsWriter::event(std::optional<int64_t> run_id, const std::string& kind,
                          const std::string& message) {
  WriteTransaction tx(db_);
  db_.prepare("INSERT INTO events(ts_us, source, run_id, kind, message) VALUES (?,'kvdrive',?,?,?)")
      .bind(1, now_ts_us())
      .bind(2, run_id)
      .bind(3, kind)
      .bind(4, message)
      .run();
  tx.commit();
}

}  // namespace kv::drive
