#include "run/kvmon_memory.hpp"

#include <cstdint>

#include "kvbench/units.hpp"

namespace kv::drive {

std::string local_store_memory(Database& db, const StoreStatsPoller& stats) {
  auto pid = stats.latest("process_id");
  if (!pid) pid = stats.latest("pid");
  if (!pid) return "";
  auto q = db.prepare(
      "SELECT s.rss_kib, s.swap_kib FROM process_samples s JOIN process_instances i "
      "USING (instance_id) WHERE i.pid = ? AND i.parent_instance_id IS NULL "
      "ORDER BY s.ts_us DESC LIMIT 1");
  q.bind(1, static_cast<int64_t>(*pid));
  if (!q.step() || q.is_null(0)) return "";
  std::string text = "  rss " + format_size(static_cast<uint64_t>(q.column_int(0)) * 1024);
  if (!q.is_null(1)) text += " swap " + format_size(static_cast<uint64_t>(q.column_int(1)) * 1024);
  return text;
}

}  // namespace kv::drive
