// What `kvdrive run` prints once the engine is done: report/'s summary of the run or group.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "run/process_group.hpp"
#include "run/run.hpp"
#include "view/percentiles.hpp"

namespace kv::drive {

// What `kvdrive run` writes besides the results file.
struct RunOutputs {
  PercentileList percentiles = default_percentiles();  // --percentiles, of the summary
  std::string json_out;                                // --json-out FILE, or empty
  bool force = false;  // --force: json_out may replace a file kvbench did not write
};

// Writes `outputs.json_out` (the run as one JSON document), then prints the run's summary
// (nothing with opts.quiet; JSON with opts.json), a run that did not complete saying so first,
// and logs a failed run's error. Returns the run's exit code (1 also when the JSON file could
// not be written; the run stays recorded).
int print_run_record(RunRecord& rec, const RunOptions& opts, std::ostream& out,
                     const RunOutputs& outputs = {});

// --repeat: one round's summary as print_run_record prints it, but with neither --json-out nor
// --json, which take all the rounds at the end (print_rounds_record). Returns its exit code.
int print_round_record(RunRecord& rec, const RunOptions& opts, std::ostream& out,
                       const RunOutputs& outputs = {});

// --repeat, once the rounds are over (all of them, or up to the first that did not complete,
// whose exit code is `code`): writes `outputs.json_out` and, with opts.json, prints the rounds
// as one JSON document; else a line naming the rounds' runs. Returns `code`, or 1 when the
// JSON file could not be written.
int print_rounds_record(Database& db, const std::vector<int64_t>& run_ids, int code,
                        const RunOptions& opts, std::ostream& out, const RunOutputs& outputs = {});

// Writes `outputs.json_out` (the group's runs as one JSON document with its "group" summary),
// then prints the group's summary (JSON with opts.json) after one line per process that did not
// complete, and logs those lines. Returns the group's exit code (1 also when the JSON file
// could not be written).
int print_group_record(GroupRecord& rec, const RunOptions& opts, std::ostream& out,
                       const RunOutputs& outputs = {});

}  // namespace kv::drive
