// The capacity search's results (`kvdrive run --search`) as text: one table of steps per
// searched target (offered, achieved, percentiles, slip, client and store CPU, verdict, limit)
// and the result line. Reads only the results file.
#pragma once

#include <cstdint>
#include <ostream>

#include "kvbench/sqlite.hpp"

namespace kv::drive {

// Prints nothing when the run has no search.
void print_search_results(Database& db, int64_t run_id, std::ostream& out);

}  // namespace kv::drive
