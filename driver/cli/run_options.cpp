// RunCommand's options: what `kvdrive run --help` lists, in its order (run_command.hpp).
#include <CLI/CLI.hpp>
#include <string>
#include <string_view>

#include "cli/memtier_flags.hpp"
#include "cli/run_command.hpp"
#include "kvbench/cli_validators.hpp"
#include "kvbench/units.hpp"
#include "workload/workload_options.hpp"

namespace kv::drive {
namespace {

// What --help shows as each workload option's type, and the memtier_benchmark flags that mean
// the same thing (the rest of memtier's are cli/memtier_flags.hpp's).
struct OptionLook {
  const char* type;
  const char* aliases;  // ",-t" appended to the option's names; "" for none
};

OptionLook look_of(std::string_view name) {
  static const std::map<std::string_view, OptionLook> looks = {
      {"phases", {"LIST", ""}},
      {"keys", {"N", ""}},
      {"value-size", {"SIZE", ",-d,--data-size"}},
      {"key-pattern", {"PATTERN", ""}},
      {"requests", {"N", ""}},
      {"duration", {"DURATION", ",--test-time"}},
      {"ratio", {"SETS:GETS", ""}},
      {"hit-rate", {"FRACTION", ""}},
      {"rate", {"REQ/S", ""}},
      {"spin-budget", {"PCT", ""}},
      {"pace-granularity", {"DURATION", ""}},
      {"wire-start", {"WHERE", ""}},
      {"io", {"HOW", ""}},
      {"warmup", {"DURATION", ""}},
      {"threads", {"N", ",-t"}},
      {"connections", {"N", ",-c,--clients"}},
      {"pipeline", {"N", ""}},
      {"key-prefix", {"TEXT", ""}},
      {"ttl", {"DURATION", ""}},
      {"seed", {"N", ""}},
  };
  auto it = looks.find(name);
  return it == looks.end() ? OptionLook{"TEXT", ""} : it->second;
}

}  // namespace

// The options in --help's order: the store and the workload, the limits and the outputs, the
// monitors and the process groups, the search, memtier_benchmark's flags.
RunCommand::RunCommand(CLI::App& app)
    : sub_(app.add_subcommand("run", "Benchmark one or more stores, one after another")) {
  add_store_options(*sub_);
  add_output_options(*sub_);
  add_group_options(*sub_);
  add_search_options(*sub_, search_cli_);
  // memtier_benchmark's command line: its flags, and its meanings when it names the store.
  memtier_.add_to(*sub_);
}

void RunCommand::add_store_options(CLI::App& app) {
  CLI::App* run = &app;
  run->add_option("--db", opts_.db_path, "Results file (SQLite; created if missing)")
      ->type_name("FILE")
      ->required()
      ->check(cli::non_empty());
  run->add_option("--target", opts_.targets,
                  "Store URI, repeatable: redis://[user:password@]host[:port][/db],\n"
                  "redis+cluster://seed[:port][,seed...][?read-from=replica] or\n"
                  "memcached://host[:port][,host[:port]...] (options after ?, joined by &:\n"
                  "protocol=binary, nodelay=0, writes=split, on-failure=eject)\n"
                  "(a port left out is 6379 or 11211; required unless -s/-p/-P/-a say it)")
      ->type_name("URI");
  run->add_option("--name", opts_.name, "A name for the run")->type_name("TEXT");
  run->add_option("--scenario", scenario_,
                  "A shipped scenario (see `kvdrive scenarios`) or a scenario file; options given "
                  "here override its values")
      ->type_name("NAME|FILE")
      ->check(cli::non_empty());
  run->add_option("--scale", scale_text_, "Scenario size factor: keys, requests and durations x F")
      ->type_name("F")
      ->check(cli::parsed_by(parse_scale));
  for (const auto& o : workload_options()) {
    std::string help = o.help;
    CLI::Option* opt = nullptr;
    if (o.flag) {
      opt = run->add_flag("--" + std::string(o.name) + look_of(o.name).aliases,
                          workload_flags_[o.name], help);
    } else {
      help += std::string(" [default: ") + o.default_text + "]";
      opt = run->add_option("--" + std::string(o.name) + look_of(o.name).aliases,
                            workload_text_[o.name], help)
                ->type_name(look_of(o.name).type);
    }
    workload_cli_.emplace_back(&o, opt);
  }
  commands_.add_to(*run);
}

void RunCommand::add_output_options(CLI::App& app) {
  CLI::App* run = &app;
  run->add_option("--timeout", timeout_, "Per-request and connect timeout")
      ->type_name("DURATION")
      ->capture_default_str()
      ->check(cli::parsed_by(parse_duration_us));
  run->add_option("--max-errors", max_errors_,
                  "Fail the run once this many requests failed (0: never)")
      ->type_name("N")
      ->check(cli::parsed_by(parse_count));
  run->add_option("--give-up-after", give_up_,
                  "Fail a phase when requests kept failing and none was answered for this long "
                  "(a store that died for good; 0: never)")
      ->type_name("DURATION")
      ->capture_default_str()
      ->check(cli::parsed_by(parse_duration_us));
  run->add_flag("--json", opts_.json, "Print the summary as JSON");
  run->add_option("--percentiles", percentiles_,
                  "Latency percentiles shown per phase, e.g. 50,90,99,99.9,99.99 (the max is "
                  "always shown) [default: 50,90,99,99.9]")
      ->type_name("LIST")
      ->check(cli::parsed_by(parse_percentiles));
  run->add_option("--json-out", json_out_,
                  "Also write the run as one JSON document to this file (docs/output-fields.md)")
      ->type_name("FILE")
      ->check(cli::non_empty());
  run->add_flag("--force", outputs_.force,
                "Let --json-out replace a file that is not kvbench's JSON (refused otherwise)");
  run->add_option(
         "--hdr-log", opts_.hdr_log_prefix,
         "Also write each target's per-second latency histograms as an HdrHistogram "
         "interval log, PREFIX.<N>.hlog (N: the target's 0-based ordinal; with --processes, "
         "one log for the whole group)")
      ->type_name("PREFIX")
      ->check(cli::non_empty());
}

void RunCommand::add_group_options(CLI::App& app) {
  CLI::App* run = &app;
  run->add_option("--monitor", opts_.monitors,
                  "kvmon HOST:PORT (kvmon --listen) to pull samples from into the results file, "
                  "in kvdrive's time base; repeatable")
      ->type_name("HOST:PORT");
  run->add_option("--password-file", password_file_,
                  "File whose first line is the password of redis targets whose URI has none "
                  "(else the REDISCLI_AUTH environment variable): kept out of argv, which every "
                  "user of the host can read")
      ->type_name("FILE")
      ->check(cli::non_empty());
  run->add_option("--monitor-token-file", opts_.monitor_token_file,
                  "File whose first line is the token kvmon requires")
      ->type_name("FILE")
      ->check(cli::non_empty());
  run->add_option("--processes", processes_,
                  "Run as N kvdrive processes sharing the workload (one run each, one group); "
                  "1 to 256. With --search the parent judges each step on the processes' "
                  "results added up")
      ->type_name("N")
      ->check(cli::non_empty());
  run->add_option("--segment", segment_,
                  "Run segment I of N of this run on this host (1 <= I <= N): --threads, "
                  "--keys, --requests and --rate stay the whole run's, this host takes its share "
                  "of the threads and their keys, requests and rate")
      ->type_name("I/N")
      ->check(cli::non_empty());
  run->add_option("--group", group_,
                  "Label that ties the runs of several hosts (their --segment) into one group "
                  "(runs.run_group)")
      ->type_name("LABEL")
      ->check(cli::non_empty());
  run->add_option("--start-at", start_at_,
                  "Start the first phase at this wall time, after connecting: UTC "
                  "YYYY-MM-DDTHH:MM:SS[.fff]Z, @EPOCH-SECONDS, or +DURATION from now (+10s)")
      ->type_name("TIME")
      ->check(cli::non_empty());
  run->add_option("--repeat", repeat_,
                  "Run the whole workload N times, each round its own run (runs.repeat_group, "
                  "round), the targets' order rotated each round (A B, B A ...) so that a drift "
                  "of the machine hits each alike; 1 to 1000")
      ->type_name("N")
      ->check(cli::whole_number(1, 1000));
  run->add_option("--run-group", opts_.run_group)->group("");  // set for the group's processes
  run->add_option("--process-index", process_index_)->group("")->check(cli::non_empty());
  run->add_option("--search-follow", search_follow_)->group("")->check(cli::non_empty());
  run->add_option("--phase-barrier", phase_barrier_)->group("")->check(cli::non_empty());
  run->add_flag("--monitor-optional", opts_.monitor_optional,
                "Go on (with a warning) if a kvmon cannot be reached");
}

}  // namespace kv::drive
