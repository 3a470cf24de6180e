// What the capacity search's unit tests share (search_test.cpp, search_rate_test.cpp): the
// options of a search and a synthetic step to judge.
#pragma once

#include <cstdint>
#include <string>

#include "search/search.hpp"

namespace kv::drive {

inline SearchOptions options(const std::string& slo = "p99=1ms") {
  SearchOptions s;
  s.enabled = true;
  s.objective.latency = parse_slo(slo);
  return s;
}

// A step of `seconds` at `offered`, answering `achieved` req/s with every latency `lat_us`.
inline StepMeasure step(double offered, double achieved, double lat_us, double seconds = 5) {
  StepMeasure m;
  m.offered_rate = offered;
  m.seconds = seconds;
  m.ops = static_cast<uint64_t>(achieved * seconds);
  for (uint64_t i = 0; i < m.ops; ++i) m.latency.record(static_cast<uint64_t>(lat_us * 1e3));
  return m;
}

}  // namespace kv::drive
