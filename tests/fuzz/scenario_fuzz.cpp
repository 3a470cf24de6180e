// libFuzzer target for scenario files (driver/workload/scenario.hpp parse_scenario): only
// std::invalid_argument may escape (whose message names the scenario), and a parsed scenario has
// at least one step, with named steps when there are several. docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "workload/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  kv::drive::Scenario s;
  try {
    s = kv::drive::parse_scenario("fuzz", text);
  } catch (const std::invalid_argument& e) {
    if (std::string_view(e.what()).find("fuzz") == std::string_view::npos) std::abort();
    return 0;
  }
  if (s.name != "fuzz" || s.steps.empty()) std::abort();
  if (s.steps.size() > 1)
    for (const auto& step : s.steps)
      if (step.name.empty()) std::abort();
  for (const auto& [key, value] : s.defaults)
    if (key.empty()) std::abort();
  return 0;
}
