#include "workload/scenario.hpp"

#include <filesystem>
#include <map>
#include <stdexcept>

#include "kvbench/usage_error.hpp"
#include "util/text_file.hpp"
#include "workload/workload_options.hpp"

namespace kv::drive {
namespace {

void apply_all(WorkloadSpec& w, const std::vector<std::pair<std::string, std::string>>& opts) {
  for (const auto& [k, v] : opts) set_workload_option(w, k, v);
}

}  // namespace

Scenario parse_scenario(std::string_view name, std::string_view text) {
  Scenario s;
  s.name = std::string(name);
  int line_no = 0;
  auto fail = [&](const std::string& why) {
    throw UsageError("scenario " + s.name + ", line " + std::to_string(line_no) + ": " + why);
  };
  WorkloadSpec probe;                // every option is applied once here to check its value
  std::map<std::string, int> lines;  // "step\noption" -> the line it was given on
  while (!text.empty()) {
    ++line_no;
    auto nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    if (line.front() == '[') {
      if (line.back() != ']' || line.substr(0, 6) != "[step ")
        fail("expected [step NAME], got '" + std::string(line) + "'");
      std::string step(trim(line.substr(6, line.size() - 7)));
      if (step.empty() || step.find('/') != std::string::npos)
        fail("a step needs a name without '/'");
      for (const auto& st : s.steps)
        if (st.name == step) fail("step '" + step + "' appears twice");
      s.steps.push_back({step, {}});
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string_view::npos)
      fail("expected 'option = value', got '" + std::string(line) + "'");
    std::string key(trim(line.substr(0, eq)));
    std::string value(trim(line.substr(eq + 1)));
    if (key == "description" && s.steps.empty()) {
      s.description = value;
      continue;
    }
    try {
      set_workload_option(probe, key, value);
    } catch (const UsageError& e) {
      fail(e.what());
    }
    // Given twice in one place, the later value silently won.
    const std::string where = s.steps.empty() ? "" : s.steps.back().name;
    auto [first, fresh] = lines.emplace(where + "\n" + key, line_no);
    if (!fresh)
      fail("option '" + key + "' appears twice " +
           (where.empty() ? std::string("before the first step") : "in step '" + where + "'") +
           " (first on line " + std::to_string(first->second) + ")");
    (s.steps.empty() ? s.defaults : s.steps.back().options).emplace_back(key, value);
  }
  if (s.steps.empty()) s.steps.push_back({"", {}});
  return s;
}

Scenario load_scenario(const std::string& name_or_path) {
  for (const auto& e : shipped_scenarios())
    if (name_or_path == e.name) return parse_scenario(e.name, e.text);
  std::error_code ec;
  if (!std::filesystem::exists(std::filesystem::symlink_status(name_or_path, ec))) {
    std::string names;
    for (const auto& e : shipped_scenarios())
      names += std::string(names.empty() ? "" : ", ") + e.name;
    throw UsageError("unknown scenario '" + name_or_path + "' (not a file; shipped: " + names +
                     ")");
  }
  // Bounded: --scenario /dev/zero or a FIFO is refused, not read forever.
  return parse_scenario(name_or_path, read_text_file("--scenario", name_or_path));
}

std::vector<RunStep> expand_scenario(
    const Scenario& s, const WorkloadSpec& base,
    const std::vector<std::pair<std::string, std::string>>& overrides, double scale,
    bool warmup_added) {
  std::vector<RunStep> steps;
  for (const auto& st : s.steps) {
    RunStep r{st.name, base};
    apply_all(r.workload, s.defaults);
    apply_all(r.workload, st.options);
    apply_all(r.workload, overrides);
    if (scale != 1.0) scale_workload(r.workload, scale);
    try {
      check_workload(r.workload, warmup_added);
    } catch (const UsageError& e) {
      std::string where = s.name.empty() ? "" : "scenario " + s.name + ", ";
      if (!st.name.empty()) where += "step " + st.name + ": ";
      throw UsageError(where + e.what());
    }
    steps.push_back(std::move(r));
  }
  return steps;
}

}  // namespace kv::drive
