// Runs a capacity search against one target and records it: each step through a callback (the
// phase runner's rate mode today), judged with what kvmon saw meanwhile (read from the results
// file: a local kvmon writing it, or samples pulled with --monitor), one search_steps row per
// step and one search_results row at the end.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "engine/phase_runner.hpp"
#include "kvbench/sqlite.hpp"
#include "search/search.hpp"
#include "stats/second_report.hpp"
#include "store/target_uri.hpp"
#include "workload/workload.hpp"

namespace kv::drive {

// What the phase runner gives back of one step.
struct StepRun {
  int64_t phase_id = 0;
  int64_t measured_from_ts_us = 0;  // first row after the warm-up
  int64_t ended_ts_us = 0;
  StepMeasure measure;  // client side filled in; server signs are read here
};

// The workload of one step at `rate`: rate mode for the step's warm-up plus its duration.
WorkloadSpec search_step_workload(const SearchOptions& s, const WorkloadSpec& w, double rate);
// Each second of a step as the phase runner hands it over: its client CPU after the warm-up.
void note_step_second(const SecondReport& sec, StepRun* step);
// The step's client side from the phase's totals (after its warm-up), once it is over.
void fill_step_run(const PhaseResult& result, int64_t phase_id, const WorkloadSpec& w,
                   StepRun* step);

// Runs one step at `rate`; nullopt when the phase did not complete (interrupted, failed): the
// search stops there.
using StepRunner = std::function<std::optional<StepRun>(double rate)>;

// kvmon's view of the store during [from_ts_us, to_ts_us): the host's swap-ins and memory
// PSI, the store process's major faults and CPU (found by the pid the store reports about
// itself). Waits up to wait_us for a sample at the window's end when the file has samples of
// this store at all (a local kvmon commits every few seconds). Unknown figures stay nullopt.
ServerSigns read_server_signs(Database& db, int64_t target_id, Protocol protocol,
                              int64_t from_ts_us, int64_t to_ts_us, int64_t wait_us);

// Steps until the search is over. Returns false when a step did not complete.
bool run_search(const SearchOptions& s, Database& db, int64_t run_id, int64_t target_id,
                Protocol protocol, const std::string& label, const StepRunner& run_step);

}  // namespace kv::drive
