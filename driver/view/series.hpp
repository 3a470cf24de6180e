// A run's raw series read back for the machine formats (CSV, JSON): every second the driver
// recorded beside what kvmon and the store saw in it, kvmon's samples of the stores and of the
// hosts during the run, and the run's events. Columns are named as the results file names them
// (units in the name: _us, _kib, _bytes); docs/output-fields.md lists them.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "kvbench/sqlite.hpp"
#include "view/rows.hpp"

namespace kv::drive {

// Every second and op (timeline view's kvmon columns: the store process's sample whose tick fell
// in the second, the host's likewise, the store's latest used_memory), by target, phase, second,
// op DESC: phase_id first (for second_percentiles), then store, phase, op, ts_us, ... lat_max_us
// ... store_used_memory (the SELECT in series.cpp).
Rows load_timeline(Database& db, int64_t run_id);
// The kvmon instance chosen as each of the run's targets' store (store_instance), as
// (target_id, instance_id) in target order; targets kvmon did not watch are left out.
std::vector<std::pair<int64_t, int64_t>> load_store_instances(Database& db, int64_t run_id);
// kvmon's samples of `instance` during target `target_id`'s run: store, host, pid, process,
// ts_us, scheduled_ts_us, then kProcessTable's columns (kvbench/samples.hpp).
Rows load_process_samples(Database& db, int64_t target_id, int64_t instance_id);
// kvmon's samples of the hosts during the run: host, ts_us, scheduled_ts_us, then kHostTable's
// columns.
Rows load_host_samples(Database& db, int64_t run_id);
// The run's events: ts_us, source, kind, message.
Rows load_events(Database& db, int64_t run_id);

}  // namespace kv::drive
