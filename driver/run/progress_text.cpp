#include "run/progress_text.hpp"

#include <algorithm>

#include "kvbench/units.hpp"

namespace kv::drive {

std::vector<ProgressField> progress_fields(const std::string& label, double elapsed_s,
                                           const SecondReport& sec, uint64_t done, uint64_t planned,
                                           double planned_s) {
  // req/s: answered requests per wall second; p99: the worse of the ops' p99 in that second.
  namespace pp = progress_priority;
  const uint64_t errors = sec.failed();
  double p99_us = 0;
  for (const auto& s : sec.by_op)
    if (s.ops > 0) p99_us = std::max(p99_us, s.lat_p99_us);
  double rate = sec.interval_us > 0
                    ? static_cast<double>(sec.ok()) * 1e6 / static_cast<double>(sec.interval_us)
                    : 0;
  // Appended, not "/" + string: GCC 12 -O3 prints a false -Wrestrict for that.
  std::string total = planned_s > 0 ? std::string("/").append(fmt_fixed(planned_s, 0)) : "";
  total += " s";
  std::string count = fmt_int(static_cast<double>(done));
  if (planned > 0) count.append("/").append(fmt_int(static_cast<double>(planned)));
  return {
      {label + (sec.warmup ? " (warm-up)" : ""), pp::kLabel},
      {fmt_fixed(elapsed_s, 0) + total, pp::kElapsed},
      {count, pp::kCount},
      {fmt_int(rate) + " req/s", pp::kRate},
      {"p99 " + fmt_fixed(p99_us / 1e3, 3) + " ms", pp::kP99},
      {"errors " + fmt_int(static_cast<double>(errors)), errors > 0 ? pp::kErrors : pp::kNoErrors}};
}

std::string store_memory_text(const StoreStatsPoller& stats) {
  auto v = stats.latest("used_memory");
  if (!v) v = stats.latest("bytes");
  return v ? "  store mem " + format_size(static_cast<uint64_t>(*v)) : "";
}

}  // namespace kv::drive
