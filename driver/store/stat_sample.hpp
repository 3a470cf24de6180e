// A store's own counters as polled once (StoreStatsPoller) and written (results/): plain data,
// apart from store_stats.hpp so that the results writer sees no poller, thread or socket.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kv::drive {

struct StatValue {
  std::string name;
  double value;
};

struct StoreStatsSample {
  int64_t ts_us;  // kv::now_ts_us() when the (last) reply of this poll arrived
  std::vector<StatValue> values;
};

}  // namespace kv::drive
