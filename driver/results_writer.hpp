// Writes kvdrive's rows into a results file: runs, targets, phases, per-second rows, latency
// histograms and events. Every method is one short write transaction. Single-threaded.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "interval_stats.hpp"
#include "kvbench/sqlite.hpp"
#include "target_uri.hpp"

namespace kv::drive {

struct RunInfo {
  std::string name;
  std::string command_line;
  std::string parameters_json;
  int64_t started_ts_us = 0;
};

class ResultsWriter {
 public:
  explicit ResultsWriter(Database& db) : db_(db) {}

  int64_t begin_run(const RunInfo& info);
  // status: completed, interrupted or failed; error: why, or empty.
  void end_run(int64_t run_id, const std::string& status, const std::string& error);
  int64_t add_target(int64_t run_id, int ordinal, const TargetSpec& spec,
                     const std::string& server_version);
  int64_t begin_phase(int64_t run_id, int64_t target_id, int ordinal, const std::string& kind,
                      int64_t started_ts_us, int threads, int connections,
                      std::optional<int64_t> requests);
  void write_second(int64_t phase_id, int64_t ts_us, int64_t interval_us,
                    const IntervalStats& stats);
  // Marks the phase ended and stores its full latency histograms as bucket rows.
  void end_phase(int64_t phase_id, int64_t ended_ts_us, const std::string& status,
                 const IntervalStats& totals);
  void event(std::optional<int64_t> run_id, const std::string& kind, const std::string& message);

 private:
  Database& db_;
};

}  // namespace kv::drive
