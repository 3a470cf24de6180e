// `kvdrive merge`: several results files brought into one. Every run (with its targets, phases,
// per-second rows and histograms, store stats, metadata, search rows and events) and every kvmon
// session (with its processes and samples, each under its host name) is copied; integer ids are
// renumbered, every reference follows. Identity, for idempotence:
//   a run: its run_uuid (a run made before migration 011 has none: client_host, client_pid and
//     started_ts_us);
//   a kvmon session (it has no UUID): host, kvmon_pid, started_ts_us and link, and what tells
//     the copies of several kvdrives that pulled it over --monitor apart (clock offset, count
//     and last time of the samples): identical copies are one, different copies all kept;
//   an event of neither: its time, source, kind and message.
// A run or session already in the output is left exactly as it is (never overwritten) and its
// copy in an input is skipped; so merging a file twice adds nothing, and a merged file can be
// merged again. The sessions an input's kvdrive pulled over --monitor during its run are tied to
// that run (run_monitor_sessions), so each run reads its own copy. Runs and sessions are added in
// order of (started_ts_us, identity) over all inputs of one call, so one call gives the same ids
// whatever the order of its inputs. Times are copied as recorded: every file is on its host's wall
// clock (UTC microseconds), which is the common time base when the hosts' clocks are synchronized
// (run_metadata records it).
#pragma once

#include <atomic>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

// Every table of the results schema this merge copies (tests compare it with the schema: a
// migration adding a table must teach the merge).
const std::vector<std::string>& merged_tables();

struct MergeInput {
  std::string label;  // the path, for messages
  Database* db;       // opened read-only, at this build's schema version or older
};

struct MergeCounts {
  // present: in the output already (a copy given twice on one call counts once)
  int64_t runs_added = 0, runs_present = 0;
  int64_t sessions_added = 0, sessions_present = 0;
  int64_t events_added = 0;            // events of neither a run nor a session
  std::vector<std::string> groups;     // run_group of the inputs' runs, sorted, each once
  std::vector<int64_t> added_run_ids;  // in `out`, ascending
};

// Copies what `inputs` hold and `out` does not into `out`, in one write transaction (on any
// throw nothing is written). `out` is a results file at the latest schema version. Throws
// std::runtime_error if `out` has a table merged_tables() does not list, SqliteError on
// database errors. `stop` (set by a signal handler) is looked at before each row copied and
// before the commit: once set, MergeInterrupted is thrown and nothing is written.
struct MergeInterrupted : std::runtime_error {
  MergeInterrupted() : std::runtime_error("merge: interrupted before its commit") {}
};
MergeCounts merge_results(Database& out, const std::vector<MergeInput>& inputs,
                          const std::atomic<bool>* stop = nullptr);

}  // namespace kv::drive
