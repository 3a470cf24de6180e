#include "workload/search_options.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"

namespace kv::drive {
namespace {

[[noreturn]] void bad(std::string_view option, std::string_view text, const std::string& why) {
  throw UsageError("invalid " + std::string(option) + " '" + std::string(text) + "': " + why);
}

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> parts;
  while (true) {
    auto comma = text.find(',');
    parts.push_back(text.substr(0, comma));
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return parts;
}

bool parse_double(std::string_view text, double* v) {
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), *v);
  return ec == std::errc() && p == text.data() + text.size() && std::isfinite(*v);
}

}  // namespace

double parse_search_number(std::string_view name, std::string_view text, double lo, double hi) {
  double v = 0;
  if (!parse_double(text, &v) || !(v >= lo) || !(v <= hi)) {
    auto num = [](double d) {
      std::string s = std::to_string(d);
      s.erase(s.find_last_not_of('0') + 1);
      if (!s.empty() && s.back() == '.') s.pop_back();
      return s;
    };
    bad(name, text, "expected a number from " + num(lo) + " to " + num(hi));
  }
  return v;
}

std::vector<LatencyBound> parse_slo(std::string_view text) {
  std::vector<LatencyBound> bounds;
  if (text.empty()) bad("--slo", text, "expected e.g. p99=1ms,p99.9=5ms");
  for (std::string_view part : split_commas(text)) {
    auto eq = part.find('=');
    if (eq == std::string_view::npos || part.size() < 2 || part[0] != 'p')
      bad("--slo", part, "expected pNN=DURATION, e.g. p99=1ms");
    std::string_view name = part.substr(0, eq);
    double pct = 0;
    if (!parse_double(name.substr(1), &pct) || !(pct > 0) || !(pct < 100))
      bad("--slo", part, "the percentile must be above 0 and below 100 (p50, p99, p99.9)");
    // A bare number is a duration in seconds elsewhere; a latency objective that silently
    // meant p99 <= 1 s when 1 ms was meant would pass every step: its unit must be written.
    std::string_view bound = part.substr(eq + 1);
    if (!bound.empty() &&
        (std::isdigit(static_cast<unsigned char>(bound.back())) != 0 || bound.back() == '.'))
      bad("--slo", part, "a latency bound needs its unit: us, ms or s (e.g. p99=1ms)");
    int64_t max_us = 0;
    try {
      max_us = parse_duration_us(bound);
    } catch (const UsageError& e) {
      bad("--slo", part, e.what());
    }
    if (max_us <= 0) bad("--slo", part, "the bound must be above 0");
    for (const auto& b : bounds)
      if (b.name == name) bad("--slo", text, std::string(name) + " given twice");
    bounds.push_back({std::string(name), pct / 100, static_cast<double>(max_us)});
  }
  return bounds;
}

std::vector<double> parse_rate_list(std::string_view text) {
  std::vector<double> rates;
  for (std::string_view part : split_commas(text)) {
    uint64_t v = 0;
    try {
      v = parse_count(part);
    } catch (const UsageError& e) {
      bad("--rates", part, "expected request rates such as 1000,5k,20k");
    }
    if (v == 0 || v > 1'000'000'000) bad("--rates", part, "a rate from 1 to 1G requests/s");
    rates.push_back(static_cast<double>(v));
  }
  return rates;
}

DistressLimits parse_distress(std::string_view text, DistressLimits base) {
  DistressLimits d = base;
  if (text.empty()) bad("--distress", text, "expected e.g. swap-in=1,store-cpu=0.95");
  for (std::string_view part : split_commas(text)) {
    auto eq = part.find('=');
    if (eq == std::string_view::npos) bad("--distress", part, "expected NAME=VALUE or NAME=off");
    std::string_view name = part.substr(0, eq), value = part.substr(eq + 1);
    // Each limit: its name, its field, its largest value (a percentage 100, a fraction 1).
    struct Limit {
      std::string_view name;
      double DistressLimits::*field;
      double hi;
    };
    static constexpr Limit kLimits[] = {
        {"swap-in", &DistressLimits::swap_in_pages_per_s, 1e12},
        {"major-faults", &DistressLimits::major_faults_per_s, 1e12},
        {"psi-full", &DistressLimits::psi_memory_full_pct, 100},
        {"store-cpu", &DistressLimits::store_cpu_fraction, 1},
        {"cgroup-high", &DistressLimits::cgroup_high_events, 1e12},
        {"cgroup-max", &DistressLimits::cgroup_max_events, 1e12},
        {"cgroup-oom", &DistressLimits::cgroup_oom_events, 1e12},
        {"cgroup-psi-full", &DistressLimits::cgroup_psi_full_pct, 100},
        {"cpu-throttled", &DistressLimits::cpu_throttled_fraction, 1},
        {"cgroup-max-anon", &DistressLimits::cgroup_max_anon_fraction, 1},
    };
    const Limit* limit = nullptr;
    for (const Limit& l : kLimits)
      if (l.name == name) limit = &l;
    if (limit == nullptr)
      bad("--distress", part,
          "unknown limit (swap-in, major-faults, psi-full, store-cpu, cgroup-high, cgroup-max, "
          "cgroup-oom, cgroup-psi-full, cpu-throttled or cgroup-max-anon)");
    double* field = &(d.*(limit->field));
    const double hi = limit->hi;
    if (value == "off") {
      *field = -1;
      continue;
    }
    double v = 0;
    if (!parse_double(value, &v) || !(v >= 0) || !(v <= hi))
      bad("--distress", part,
          "expected a number from 0 to " + std::to_string(int64_t(hi)) + " or off");
    *field = v;
  }
  return d;
}

void check_search_options(const SearchOptions& s) {
  if (!s.enabled) return;
  if (s.objective.latency.empty() && s.rates.empty())
    throw UsageError("--search needs an objective: --slo, e.g. --slo p99=1ms");
  if (s.start_rate > s.max_rate) throw UsageError("--search-start must not exceed --search-max");
  if (s.step_duration_us < 1'000'000)
    throw UsageError("--search: each step needs a --duration of at least 1s");
}

std::string search_parameters_json(const std::string& workload_json, const SearchOptions& s) {
  if (!s.enabled) return workload_json;
  auto j = nlohmann::ordered_json::parse(workload_json, nullptr, false);
  if (!j.is_object()) return workload_json;
  nlohmann::ordered_json o;
  auto& slo = o["slo"] = nlohmann::ordered_json::array();
  for (const auto& b : s.objective.latency)
    slo.push_back({{"name", b.name}, {"quantile", b.quantile}, {"max_us", b.max_us}});
  o["min_achieved"] = s.objective.min_achieved;
  o["max_error_rate"] = s.objective.max_error_rate;
  if (!s.rates.empty()) {
    o["rates"] = s.rates;
  } else {
    o["start_rate"] = s.start_rate;
    o["growth"] = s.growth;
    o["precision"] = s.precision;
    o["max_rate"] = s.max_rate;
    o["max_steps"] = s.max_steps;
  }
  o["step_duration_us"] = s.step_duration_us;
  o["step_min_requests"] = s.step_min_requests;
  o["step_warmup_us"] = s.step_warmup_us;
  o["max_client_cpu"] = s.client.max_thread_cpu;
  o["max_slip_p99_us"] = s.client.max_slip_p99_us;
  auto limit = [](double v) {
    return v < 0 ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(v);
  };
  auto& distress = o["distress"];
  distress["swap_in_pages_per_s"] = limit(s.distress.swap_in_pages_per_s);
  distress["major_faults_per_s"] = limit(s.distress.major_faults_per_s);
  distress["psi_memory_full_pct"] = limit(s.distress.psi_memory_full_pct);
  distress["store_cpu_fraction"] = limit(s.distress.store_cpu_fraction);
  distress["cgroup_high_events"] = limit(s.distress.cgroup_high_events);
  distress["cgroup_max_events"] = limit(s.distress.cgroup_max_events);
  distress["cgroup_oom_events"] = limit(s.distress.cgroup_oom_events);
  distress["cpu_throttled_fraction"] = limit(s.distress.cpu_throttled_fraction);
  distress["cgroup_max_anon_fraction"] = limit(s.distress.cgroup_max_anon_fraction);
  j["search"] = std::move(o);
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

}  // namespace kv::drive
