#include "cli/search_cli.hpp"

#include <CLI/CLI.hpp>
#include <stdexcept>

#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"

namespace kv::drive {

void add_search_options(CLI::App& run, SearchCli& cli) {
  const char* group = "Capacity search (--search)";
  run.add_flag("--search", cli.search,
               "Find the highest rate that meets --slo: after the load, steps of the last phase "
               "at rising rates (x --search-growth until a step fails, then bisection)")
      ->group(group);
  auto opt = [&](const char* name, std::string& into, const char* help) {
    cli.given.push_back(run.add_option(name, into, help)->group(group));
  };
  opt("--slo", cli.slo,
      "The latency objective on intended-time latency, e.g. p99=1ms,p99.9=5ms (p50 to p99.99; "
      "each bound with its unit: us, ms or s)");
  opt("--rates", cli.rates, "Step at these rates instead of searching, e.g. 1000,2000,5k");
  opt("--min-achieved", cli.min_achieved,
      "A step fails when it achieved less than this fraction of its rate [default: 0.95]");
  opt("--max-error-rate", cli.max_error_rate,
      "A step fails when more than this fraction of its requests failed [default: 0.001]");
  opt("--search-start", cli.start, "The first step's rate [default: 1000]");
  opt("--search-max", cli.max, "Never step above this rate [default: none]");
  opt("--search-precision", cli.precision,
      "Bisect until the failing and passing rates are this fraction apart [default: 0.02]");
  opt("--search-growth", cli.growth, "Rate factor from one step to the next [default: 2]");
  opt("--search-steps", cli.steps, "At most this many steps [default: 40]");
  opt("--distress", cli.distress,
      "Server limits a step must not reach, from kvmon's samples: swap-in=PAGES/s, "
      "major-faults=N/s, psi-full=PCT, store-cpu=FRACTION; the store's cgroup: cgroup-high=N, "
      "cgroup-max=N, cgroup-oom=N (events in a step), cgroup-psi-full=PCT (its v2 memory "
      "pressure), cpu-throttled=FRACTION of quota periods, cgroup-max-anon=FRACTION (memory.max "
      "events count only with anon + shmem at this fraction of the limit) "
      "(or NAME=off) [default: swap-in=1,major-faults=100,psi-full=10,store-cpu=0.95,"
      "cgroup-high=0,cgroup-max=0,cgroup-oom=0,cgroup-psi-full=10,cpu-throttled=0.1,"
      "cgroup-max-anon=0.9]");
  opt("--max-slip", cli.max_slip,
      "A step whose send slip p99 exceeds this while a kvdrive thread was busy is client-bound "
      "(invalid) [default: 5ms]");
  opt("--max-client-cpu", cli.max_client_cpu,
      "A step in which a kvdrive thread used more than this fraction of a core is "
      "client-bound (invalid) [default: 0.9]");
  // What each takes, for --help (CLI11 says TEXT for every string option).
  const std::pair<const char*, const char*> types[] = {
      {"--slo", "PCT=DURATION,..."},      {"--rates", "RATE,..."},
      {"--min-achieved", "FRACTION"},     {"--max-error-rate", "FRACTION"},
      {"--search-start", "RATE"},         {"--search-max", "RATE"},
      {"--search-precision", "FRACTION"}, {"--search-growth", "FACTOR"},
      {"--search-steps", "COUNT"},        {"--distress", "NAME=VALUE,..."},
      {"--max-slip", "DURATION"},         {"--max-client-cpu", "FRACTION"}};
  for (const auto& [name, type] : types) run.get_option(name)->type_name(type);
}

SearchOptions finish_search_options(const SearchCli& cli, std::vector<RunStep>& steps,
                                    bool phases_given, bool warmup_given) {
  SearchOptions s;
  if (!cli.search) {
    for (const CLI::Option* o : cli.given)
      if (o->count() > 0) throw UsageError(o->get_name() + " needs --search");
    return s;
  }
  s.enabled = true;
  if (steps.size() != 1)
    throw UsageError("--search takes a workload of one step (the scenario has " +
                     std::to_string(steps.size()) + ")");
  WorkloadSpec& w = steps.front().workload;
  if (w.rate > 0) throw UsageError("--search sets each step's rate: drop --rate");
  if (w.requests > 0) throw UsageError("--search: steps end by --duration, not --requests");
  // (--command alone: its commands, as a run's, without a load phase of string keys)
  if (!phases_given && w.commands.empty()) w.phases = {PhaseKind::load, PhaseKind::mixed};
  if (w.phases.back() == PhaseKind::load)
    throw UsageError("--search steps the last of --phases: it must be read or mixed");
  if (w.duration_us > 0) s.step_duration_us = w.duration_us;
  // --warmup 0: no warm-up (each step is measured from its start); not given: the default.
  if (warmup_given || w.warmup_us > 0) s.step_warmup_us = w.warmup_us;
  w.duration_us = 0;  // the phases run once (load) are not cut short
  w.warmup_us = 0;

  if (!cli.slo.empty()) s.objective.latency = parse_slo(cli.slo);
  if (!cli.rates.empty()) s.rates = parse_rate_list(cli.rates);
  if (!cli.min_achieved.empty())
    s.objective.min_achieved = parse_search_number("--min-achieved", cli.min_achieved, 0, 1);
  if (!cli.max_error_rate.empty())
    s.objective.max_error_rate = parse_search_number("--max-error-rate", cli.max_error_rate, 0, 1);
  if (!cli.start.empty()) s.start_rate = parse_search_number("--search-start", cli.start, 1, 1e9);
  if (!cli.max.empty()) s.max_rate = parse_search_number("--search-max", cli.max, 1, 1e9);
  if (!cli.precision.empty())
    s.precision = parse_search_number("--search-precision", cli.precision, 0.001, 1);
  if (!cli.growth.empty()) s.growth = parse_search_number("--search-growth", cli.growth, 1.1, 100);
  if (!cli.steps.empty())
    s.max_steps = static_cast<int>(parse_whole_number("--search-steps", cli.steps, 1, 1000));
  if (!cli.distress.empty()) s.distress = parse_distress(cli.distress);
  if (!cli.max_slip.empty()) {
    try {
      s.client.max_slip_p99_us = static_cast<double>(parse_duration_us(cli.max_slip));
    } catch (const UsageError& e) {
      throw UsageError("invalid --max-slip '" + cli.max_slip + "': " + e.what());
    }
  }
  if (!cli.max_client_cpu.empty())
    s.client.max_thread_cpu = parse_search_number("--max-client-cpu", cli.max_client_cpu, 0.01, 1);
  check_search_options(s);
  return s;
}

}  // namespace kv::drive
