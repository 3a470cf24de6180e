// Writes kvdrive's rows into a results file: runs, targets, phases, per-second rows, latency
// histograms and events. Every method is one short write transaction. Single-threaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "kvbench/time_base.hpp"
#include "stats/interval_stats.hpp"
#include "stats/second_report.hpp"
#include "stats/trace_curve.hpp"
#include "store/stat_sample.hpp"
#include "store/target_uri.hpp"
#include "workload/phase_plan.hpp"

namespace kv::drive {

struct RunInfo {
  std::string name;
  std::string command_line;
  std::string parameters_json;
  int64_t started_ts_us = 0;
  std::string scenario;  // empty outside scenarios
  double scale = 1.0;
  std::string run_group;  // --processes: shared by the group's runs; empty alone
  int process_index = 0, process_count = 1;
  // --repeat N: shared by the N rounds' runs, this run's round (1-based) and N; empty alone.
  std::string repeat_group;
  int round = 0, rounds = 0;
};

// A random (version 4) UUID, lower-case hex with dashes: each run's runs.run_uuid.
std::string random_uuid();

class ResultsWriter {
 public:
  // `clock`: where the times of run ends and events are read (a fake in tests).
  explicit ResultsWriter(Database& db, ClockSource& clock = system_clock_source())
      : db_(db), clock_(clock) {}

  int64_t begin_run(const RunInfo& info);
  // status: completed, interrupted or failed; error: why, or empty.
  void end_run(int64_t run_id, const std::string& status, const std::string& error);
  // The run ends with a phase still running (an exception cut it short: the disk filled, the
  // file went away): that phase takes the run's status and ends now, unless it had an end.
  void end_running_phases(int64_t run_id, const std::string& status);
  int64_t add_target(int64_t run_id, int ordinal, const TargetSpec& spec,
                     const std::string& server_version);
  // run_metadata rows: facts about kvdrive and its host (target_id nullopt) or a target's own
  // settings, name → value (nullopt: could not be read).
  using Metadata = std::vector<std::pair<std::string, std::optional<std::string>>>;
  void add_metadata(int64_t run_id, std::optional<int64_t> target_id, const Metadata& facts);
  // A replayed trace's miss-ratio curve (trace_curves), its totals as run_metadata
  // (trace_requests, trace_reads, trace_keys, trace_bytes, trace_sampling_rate).
  void write_trace_curve(int64_t run_id, const std::string& trace, const TraceCurve& curve);
  struct PhaseRow {
    int64_t run_id, target_id;
    int ordinal;
    const std::string& step;  // empty outside scenarios
    const PhasePlan& plan;
    int64_t started_ts_us;
    int threads, connections;
    std::string parameters_json;
  };
  int64_t begin_phase(const PhaseRow& row);
  // The second's driver rows (one per op type the phase sends, also when none completed) and
  // its client CPU row.
  void write_second(int64_t phase_id, const SecondReport& second, bool rate_mode);
  // Marks the phase ended and stores its full latency histograms as bucket rows.
  void end_phase(int64_t phase_id, int64_t ended_ts_us, const std::string& status,
                 const IntervalStats& totals, bool rate_mode);
  // The store's own counters, one row per value.
  void write_store_stats(int64_t target_id, const std::vector<StoreStatsSample>& samples);
  void event(std::optional<int64_t> run_id, const std::string& kind, const std::string& message);

 private:
  // The latency's parts (schema 015): a phase's part histograms and part bins.
  void write_part_totals(int64_t phase_id, const IntervalStats& totals);
  // write_second's tables, inside its transaction: driver_seconds (a row per op the phase
  // sends), the second's histograms (second_latency_buckets, second_part_buckets),
  // client_seconds, pool_server_seconds.
  void write_driver_rows(int64_t phase_id, const SecondReport& sec, bool rate_mode);
  void write_second_histograms(int64_t phase_id, const SecondReport& sec, bool rate_mode);
  void write_client_row(int64_t phase_id, const SecondReport& sec, bool rate_mode);
  void write_pool_rows(int64_t phase_id, const SecondReport& sec);

  Database& db_;
  ClockSource& clock_;
};

}  // namespace kv::drive
