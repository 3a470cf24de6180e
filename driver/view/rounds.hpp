// The rounds of a `kvdrive run --repeat N` read back for `kvdrive compare`: per run, each phase's
// throughput and latency percentiles (from its merged histograms, not means of per-second
// percentiles), with what makes a round unfit to judge by.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "view/percentiles.hpp"
#include "view/run_view.hpp"

namespace kv::drive {

struct RoundPhase {
  int target_ordinal = 0;  // targets.ordinal: the target's position on the command line
  std::string store, protocol;
  int phase_ordinal = 0;  // phases.ordinal within the target
  std::string kind, op, status;
  std::optional<double> req_per_s;                 // answered requests a second, warm-up left out
  std::vector<std::optional<double>> percentiles;  // µs, one per list entry
};

struct Round {
  int64_t run_id = 0;
  std::optional<int> round;  // runs.round; nullopt for a run made once
  std::string status;        // the run's
  RunValidity validity;
  std::vector<RoundPhase> phases;  // by target ordinal, phase ordinal, op
};

// The runs of repeat group `group`, by round (empty when there is none).
std::vector<int64_t> load_repeat_group_runs(Database& db, const std::string& group);
// The repeat group of the file's latest run that has one; nullopt when none has.
std::optional<std::string> latest_repeat_group(Database& db);
// `text` as a repeat group: itself when a run has it, else the latest repeat group of runs
// named `text` (`run --name`); nullopt when neither.
std::optional<std::string> resolve_repeat_group(Database& db, const std::string& text);
// Run `run_id` as a round; `list`: the percentiles wanted.
Round load_round(Database& db, int64_t run_id, const PercentileList& list);
// load_round of each run of `run_ids`, in their order.
std::vector<Round> load_rounds(Database& db, const std::vector<int64_t>& run_ids,
                               const PercentileList& list);

}  // namespace kv::drive
