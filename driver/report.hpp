// Text reports read back from a results file, so a report is the same whether printed at the
// end of a run or later with `kvdrive report`.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

// The published-table shape for one run: store, write req/s, read req/s, p99s, errors; then
// one line per phase and op.
void print_run_summary(Database& db, int64_t run_id, std::ostream& out);
// The same as JSON: {"run_id", "status", "phases": [{store, phase, op, ops, req_per_s, ...}]}.
void print_run_json(Database& db, int64_t run_id, std::ostream& out);
// Every run in the file (or only `run_id`), oldest first. Throws std::invalid_argument if
// `run_id` is not in the file.
void print_report(Database& db, std::optional<int64_t> run_id, std::ostream& out);

}  // namespace kv::drive
