#include "results/results_writer.hpp"

#include <sys/random.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <stdexcept>

#include "kvbench/version.hpp"

namespace kv::drive {

std::string random_uuid() {
  std::array<uint8_t, 16> b{};
  size_t got = 0;
  while (got < b.size()) {
    const ssize_t n = getrandom(b.data() + got, b.size() - got, 0);
    if (n < 0 && errno != EINTR)
      throw std::runtime_error("getrandom failed: cannot make a run UUID");
    if (n > 0) got += static_cast<size_t>(n);
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s.push_back(kHex[b[i] >> 4]);
    s.push_back(kHex[b[i] & 15]);
  }
  return s;
}

int64_t ResultsWriter::begin_run(const RunInfo& info) {
  WriteTransaction tx(db_);
  db_.prepare(
         "INSERT INTO runs(name, started_ts_us, status, command_line, kvdrive_version, "
         "client_host, client_pid, parameters, scenario, scale, run_group, process_index, "
         "process_count, run_uuid, repeat_group, round, rounds) "
         "VALUES (?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
      .bind(1, info.name.empty() ? std::optional<std::string>() : info.name)
      .bind(2, info.started_ts_us)
      .bind(3, info.command_line)
      .bind(4, version())
      .bind(5, host_name())
      .bind(6, static_cast<int64_t>(getpid()))
      .bind(7, info.parameters_json)
      .bind(8, info.scenario.empty() ? std::optional<std::string>() : info.scenario)
      .bind(9, info.scenario.empty() ? std::optional<double>() : info.scale)
      .bind(10, info.run_group.empty() ? std::optional<std::string>() : info.run_group)
      .bind(11, info.run_group.empty() ? std::optional<int64_t>() : info.process_index)
      .bind(12, info.run_group.empty() ? std::optional<int64_t>() : info.process_count)
      .bind(13, random_uuid())
      .bind(14, info.repeat_group.empty() ? std::optional<std::string>() : info.repeat_group)
      .bind(15, info.repeat_group.empty() ? std::optional<int64_t>() : info.round)
      .bind(16, info.repeat_group.empty() ? std::optional<int64_t>() : info.rounds)
      .run();
  int64_t id = db_.last_insert_rowid();
  tx.commit();
  return id;
}

void ResultsWriter::end_running_phases(int64_t run_id, const std::string& status) {
  db_.prepare(
         "UPDATE phases SET status = ?, ended_ts_us = COALESCE(ended_ts_us, ?) "
         "WHERE run_id = ? AND status = 'running'")
      .bind(1, status)
      .bind(2, clock_.wall_us())
      .bind(3, run_id)
      .run();
}

void ResultsWriter::end_run(int64_t run_id, const std::string& status, const std::string& error) {
  WriteTransaction tx(db_);
  db_.prepare("UPDATE runs SET status = ?, ended_ts_us = ?, error = ? WHERE run_id = ?")
      .bind(1, status)
      .bind(2, clock_.wall_us())
      .bind(3, error.empty() ? std::optional<std::string>() : error)
      .bind(4, run_id)
      .run();
  tx.commit();
}

void ResultsWriter::add_metadata(int64_t run_id, std::optional<int64_t> target_id,
                                 const Metadata& facts) {
  if (facts.empty()) return;
  WriteTransaction tx(db_);
  auto s = db_.prepare(
      "INSERT OR IGNORE INTO run_metadata (run_id, target_id, name, value) VALUES (?,?,?,?)");
  for (const auto& [name, value] : facts) {
    s.bind(1, run_id).bind(2, target_id).bind(3, name).bind(4, value);
    s.run();
    s.reset();
  }
  tx.commit();
}

void ResultsWriter::write_trace_curve(int64_t run_id, const std::string& trace,
                                      const TraceCurve& curve) {
  WriteTransaction tx(db_);
  auto s = db_.prepare(
      "INSERT INTO trace_curves (run_id, trace, fraction, objects, objects_miss_ratio, bytes, "
      "bytes_miss_ratio) VALUES (?,?,?,?,?,?,?)");
  for (const TraceCurve::Row& r : curve.rows) {
    s.bind(1, run_id)
        .bind(2, trace)
        .bind(3, r.fraction)
        .bind(4, static_cast<int64_t>(r.objects))
        .bind(5, r.objects_miss_ratio)
        .bind(6, static_cast<int64_t>(r.bytes))
        .bind(7, r.bytes_miss_ratio);
    s.run();
    s.reset();
  }
  tx.commit();
  add_metadata(run_id, std::nullopt,
               {{"trace_requests", std::to_string(curve.requests)},
                {"trace_reads", std::to_string(curve.reads)},
                {"trace_keys", std::to_string(std::llround(curve.keys))},
                {"trace_bytes", std::to_string(std::llround(curve.bytes))},
                {"trace_sampling_rate", std::to_string(curve.sampling_rate)}});
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

int64_t ResultsWriter::begin_phase(const PhaseRow& row) {
  const PhasePlan& plan = row.plan;
  WriteTransaction tx(db_);
  db_.prepare(
         "INSERT INTO phases(run_id, target_id, ordinal, name, kind, started_ts_us, threads, "
         "connections, requests, duration_us, warmup_us, rate, parameters, step) "
         "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)")
      .bind(1, row.run_id)
      .bind(2, row.target_id)
      .bind(3, row.ordinal)
      .bind(4, row.step.empty() ? std::string(phase_kind_name(plan.kind))
                                : row.step + "/" + phase_kind_name(plan.kind))
      .bind(5, phase_kind_name(plan.kind))
      .bind(6, row.started_ts_us)
      .bind(7, row.threads)
      .bind(8, row.connections)
      .bind(9, plan.requests > 0 ? std::optional<int64_t>(static_cast<int64_t>(plan.requests))
                                 : std::nullopt)
      .bind(10, plan.duration_us > 0 ? std::optional<int64_t>(plan.duration_us) : std::nullopt)
      .bind(11, plan.warmup_us)
      .bind(12, plan.rate > 0         ? std::optional<double>(plan.rate)
                : plan.trace_rate > 0 ? std::optional<double>(plan.trace_rate)
                                      : std::nullopt)
      .bind(13, row.parameters_json)
      .bind(14, row.step.empty() ? std::optional<std::string>() : row.step)
      .run();
  int64_t id = db_.last_insert_rowid();
  tx.commit();
  return id;
}

namespace {

// A second's histogram as bucket rows of `ins`, whose columns are (phase_id, ts_us, op,
// timing or part, upper_us, count): second_latency_buckets and second_part_buckets alike.
// `group` adjacent buckets (aligned, a power of two dividing 128) go into one row at the upper
// bound of the group's last: 1 keeps every bucket.
void write_second_buckets(Statement& ins, int64_t phase_id, int64_t ts_us, OpType op,
                          const char* kind, const SparseHistogram& h, int group = 1) {
  auto put = [&](int index, uint64_t count) {
    ins.bind(1, phase_id)
        .bind(2, ts_us)
        .bind(3, op_name(op))
        .bind(4, kind)
        .bind(5, static_cast<double>(LatencyHistogram::bucket_upper_ns(index)) / 1000.0)
        .bind(6, static_cast<int64_t>(count))
        .run();
  };
  int last = -1;  // the last bucket of the group being summed; -1 before the first
  uint64_t sum = 0;
  for (const auto& [index, count] : h.buckets) {  // ascending bucket indexes
    const int end = index / group * group + group - 1;
    if (end != last) {
      if (sum > 0) put(last, sum);
      sum = 0;
      last = end;
    }
    sum += count;
  }
  if (sum > 0) put(last, sum);
}

// The per-second part histograms are kept at 16 buckets per power of two (8 of
// LatencyHistogram's 128 in a row, each percentile within 6.25 %): the parts say whose time a
// second's latency was, and at full resolution their rows were 2.5 times the latency's own.
constexpr int kSecondPartGroup = 8;

// A phase's histogram as its range row, (phase_id, op, timing or part, count, min_us, max_us,
// mean_us), and its bucket rows, (phase_id, op, timing or part, upper_us, count):
// latency_range / latency_buckets and latency_part_range / latency_part_buckets alike.
void write_phase_histogram(Statement& range, Statement& ins, int64_t phase_id, OpType op,
                           const char* kind, const LatencyHistogram& h) {
  if (h.count() == 0) return;
  range.bind(1, phase_id)
      .bind(2, op_name(op))
      .bind(3, kind)
      .bind(4, static_cast<int64_t>(h.count()))
      .bind(5, static_cast<double>(h.min_ns()) / 1000.0)
      .bind(6, static_cast<double>(h.max_ns()) / 1000.0)
      .bind(7, h.mean_ns() / 1000.0)
      .run();
  for (int i = 0; i < LatencyHistogram::kBuckets; ++i) {
    if (h.bucket_count(i) == 0) continue;
    ins.bind(1, phase_id)
        .bind(2, op_name(op))
        .bind(3, kind)
        .bind(4, static_cast<double>(LatencyHistogram::bucket_upper_ns(i)) / 1000.0)
        .bind(5, static_cast<int64_t>(h.bucket_count(i)))
        .run();
  }
}

// The parts of an op's latency (schema 015, schema/README.md "Whose time is it"), by name.
template <class H, class S>
std::array<std::pair<const char*, const H*>, 4> parts_of(const S& s) {
  return {{{"queue", &s.queue},
           {"client_send", &s.client_send},
           {"wire", &s.wire},
           {"client_recv", &s.client_recv}}};
}

}  // namespace

void ResultsWriter::write_second(int64_t phase_id, const SecondReport& sec, bool rate_mode) {
  WriteTransaction tx(db_);
  write_driver_rows(phase_id, sec, rate_mode);
  write_second_histograms(phase_id, sec, rate_mode);
  write_client_row(phase_id, sec, rate_mode);
  write_pool_rows(phase_id, sec);
  tx.commit();
}

void ResultsWriter::write_driver_rows(int64_t phase_id, const SecondReport& sec, bool rate_mode) {
  auto ins = db_.prepare(
      "INSERT INTO driver_seconds(phase_id, ts_us, interval_us, op, ops, ok, bytes_out, "
      "bytes_in, hits, misses, errors, timeouts, wrong, late, warmup, lat_mean_us, lat_p50_us, "
      "lat_p90_us, lat_p99_us, lat_p999_us, lat_max_us, uncorrected_p50_us, uncorrected_p99_us, "
      "uncorrected_max_us, slip_p50_us, slip_p99_us, slip_max_us, dropped) "
      "VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)");
  for (OpType op : kAllOps) {
    const OpSecond& s = sec[op];
    if (!s.sent) continue;  // an op type the phase does not send
    // Latency figures describe completed requests: NULL in a second where none completed.
    auto lat = [&](double v) { return s.ops > 0 ? std::optional<double>(v) : std::nullopt; };
    auto rate_only = [&](double v) {
      return rate_mode && s.ops > 0 ? std::optional<double>(v) : std::nullopt;
    };
    auto count = [](uint64_t v) { return static_cast<int64_t>(v); };
    ins.bind(1, phase_id)
        .bind(2, sec.ts_us)
        .bind(3, sec.interval_us)
        .bind(4, op_name(op))
        .bind(5, count(s.ops))
        .bind(6, count(s.ok))
        .bind(7, count(s.bytes_out))
        .bind(8, count(s.bytes_in))
        .bind(9, count(s.hits))
        .bind(10, count(s.misses))
        .bind(11, count(s.errors))
        .bind(12, count(s.timeouts))
        .bind(13, count(s.wrong))
        .bind(14, rate_mode ? std::optional<int64_t>(count(s.late)) : std::nullopt)
        .bind(15, sec.warmup ? 1 : 0)
        .bind(16, lat(s.lat_mean_us))
        .bind(17, lat(s.lat_p50_us))
        .bind(18, lat(s.lat_p90_us))
        .bind(19, lat(s.lat_p99_us))
        .bind(20, lat(s.lat_p999_us))
        .bind(21, lat(s.lat_max_us))
        .bind(22, rate_only(s.sent_p50_us))
        .bind(23, rate_only(s.sent_p99_us))
        .bind(24, rate_only(s.sent_max_us))
        .bind(25, rate_only(s.slip_p50_us))
        .bind(26, rate_only(s.slip_p99_us))
        .bind(27, rate_only(s.slip_max_us))
        .bind(28, rate_mode ? std::optional<int64_t>(count(s.dropped)) : std::nullopt)
        .run();
  }
}

void ResultsWriter::write_second_histograms(int64_t phase_id, const SecondReport& sec,
                                            bool rate_mode) {
  auto bucket = db_.prepare(
      "INSERT INTO second_latency_buckets(phase_id, ts_us, op, timing, upper_us, count) "
      "VALUES (?, ?, ?, ?, ?, ?)");
  auto part_bucket = db_.prepare(
      "INSERT INTO second_part_buckets(phase_id, ts_us, op, part, upper_us, count) "
      "VALUES (?, ?, ?, ?, ?, ?)");
  for (OpType op : kAllOps) {
    // The timings of latency_buckets: in rate mode lat_* is from the intended send time.
    write_second_buckets(bucket, phase_id, sec.ts_us, op, rate_mode ? "intended" : "sent",
                         sec[op].latency);
    if (rate_mode)
      write_second_buckets(bucket, phase_id, sec.ts_us, op, "sent", sec[op].sent_latency);
    for (const auto& [part, h] : parts_of<SparseHistogram>(sec[op]))
      write_second_buckets(part_bucket, phase_id, sec.ts_us, op, part, *h, kSecondPartGroup);
  }
}

void ResultsWriter::write_client_row(int64_t phase_id, const SecondReport& sec, bool rate_mode) {
  db_.prepare(
         "INSERT INTO client_seconds(phase_id, ts_us, interval_us, cpu_user_us, cpu_system_us, "
         "busiest_thread_cpu_pct, spin_us, clock_offset_us, cluster_moved, cluster_ask, "
         "run_delay_us) VALUES (?,?,?,?,?,?,?,?,?,?,?)")
      .bind(1, phase_id)
      .bind(2, sec.ts_us)
      .bind(3, sec.interval_us)
      .bind(4, static_cast<int64_t>(sec.cpu_user_s * 1e6))
      .bind(5, static_cast<int64_t>(sec.cpu_system_s * 1e6))
      .bind(6, sec.busiest_thread_cpu * 100)
      .bind(7, rate_mode ? std::optional<int64_t>(sec.spin_us) : std::nullopt)
      .bind(8, sec.clock_offset_us)
      .bind(9, sec.moved)
      .bind(10, sec.asked)
      .bind(11, sec.run_delay_us >= 0 ? std::optional<int64_t>(sec.run_delay_us) : std::nullopt)
      .run();
}

void ResultsWriter::write_pool_rows(int64_t phase_id, const SecondReport& sec) {
  if (sec.pool.empty()) return;
  auto row = db_.prepare(
      "INSERT INTO pool_server_seconds(phase_id, ts_us, server, answered, failed, failed_fast, "
      "probes, rehashed) VALUES (?,?,?,?,?,?,?,?)");
  for (const SecondReport::PoolSecond& p : sec.pool) {
    row.bind(1, phase_id).bind(2, sec.ts_us).bind(3, p.server);
    for (size_t c = 0; c < kPoolCounts; ++c) row.bind(static_cast<int>(4 + c), p.n[c]);
    row.run();
  }
}

void ResultsWriter::write_part_totals(int64_t phase_id, const IntervalStats& totals) {
  auto bin = db_.prepare(
      "INSERT INTO latency_part_bins(phase_id, op, upper_us, count, latency_us, queue_us, "
      "client_send_us, wire_us, client_recv_us) VALUES (?,?,?,?,?,?,?,?,?)");
  auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
  for (OpType op : kAllOps) {
    const PartBins& bins = totals[op].part_bins;
    for (int b = 0; b < PartBins::kBins; ++b) {
      const PartBins::Bin& x = bins.bins[static_cast<size_t>(b)];
      if (x.count == 0) continue;
      bin.bind(1, phase_id)
          .bind(2, op_name(op))
          .bind(3, us(PartBins::bin_upper_ns(b)))
          .bind(4, static_cast<int64_t>(x.count))
          .bind(5, us(x.latency_ns))
          .bind(6, us(x.queue_ns))
          .bind(7, us(x.client_send_ns))
          .bind(8, us(x.wire_ns))
          .bind(9, us(x.client_recv_ns))
          .run();
    }
  }
  auto ins = db_.prepare(
      "INSERT INTO latency_part_buckets(phase_id, op, part, upper_us, count) VALUES (?,?,?,?,?)");
  auto range = db_.prepare(
      "INSERT INTO latency_part_range(phase_id, op, part, count, min_us, max_us, mean_us) "
      "VALUES (?, ?, ?, ?, ?, ?, ?)");
  for (OpType op : kAllOps)
    for (const auto& [part, h] : parts_of<LatencyHistogram>(totals[op]))
      write_phase_histogram(range, ins, phase_id, op, part, *h);
}

void ResultsWriter::end_phase(int64_t phase_id, int64_t ended_ts_us, const std::string& status,
                              const IntervalStats& totals, bool rate_mode) {
  WriteTransaction tx(db_);
  db_.prepare("UPDATE phases SET ended_ts_us = ?, status = ? WHERE phase_id = ?")
      .bind(1, ended_ts_us)
      .bind(2, status)
      .bind(3, phase_id)
      .run();
  auto ins = db_.prepare(
      "INSERT INTO latency_buckets(phase_id, op, timing, upper_us, count) VALUES (?, ?, ?, ?, ?)");
  auto range = db_.prepare(
      "INSERT INTO latency_range(phase_id, op, timing, count, min_us, max_us, mean_us) "
      "VALUES (?, ?, ?, ?, ?, ?, ?)");
  auto write = [&](OpType op, const char* timing, const LatencyHistogram& h) {
    write_phase_histogram(range, ins, phase_id, op, timing, h);
  };
  for (OpType op : kAllOps) {
    if (rate_mode) {
      write(op, "intended", totals[op].latency);
      write(op, "sent", totals[op].sent_latency);
    } else {
      write(op, "sent", totals[op].latency);
    }
  }
  write_part_totals(phase_id, totals);
  tx.commit();
}

void ResultsWriter::write_store_stats(int64_t target_id,
                                      const std::vector<StoreStatsSample>& samples) {
  if (samples.empty()) return;
  WriteTransaction tx(db_);
  auto ins = db_.prepare(
      "INSERT OR REPLACE INTO store_stats(target_id, ts_us, name, value) VALUES (?, ?, ?, ?)");
  for (const auto& sample : samples) {
    for (const auto& v : sample.values)
      ins.bind(1, target_id).bind(2, sample.ts_us).bind(3, v.name).bind(4, v.value).run();
  }
  tx.commit();
}

void ResultsWriter::event(std::optional<int64_t> run_id, const std::string& kind,
                          const std::string& message) {
  WriteTransaction tx(db_);
  db_.prepare("INSERT INTO events(ts_us, source, run_id, kind, message) VALUES (?,'kvdrive',?,?,?)")
      .bind(1, clock_.wall_us())
      .bind(2, run_id)
      .bind(3, kind)
      .bind(4, message)
      .run();
  tx.commit();
}

}  // namespace kv::drive
