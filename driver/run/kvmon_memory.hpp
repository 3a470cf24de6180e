// What a kvmon writing the same results file says about the store's process, asked mid-run.
#pragma once

#include <string>

#include "kvbench/sqlite.hpp"
#include "store/store_stats.hpp"

namespace kv::drive {

// For the progress line: a kvmon on this host writing the same file as `db`: the store
// process's latest RSS and swap ("  rss X swap Y"), found by the pid the store reports about
// itself (process_id for Redis, pid for memcached, from `stats`). Empty when there is none (yet).
std::string local_store_memory(Database& db, const StoreStatsPoller& stats);

}  // namespace kv::drive
