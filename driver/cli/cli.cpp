#include "cli/cli.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "cli/check_command.hpp"
#include "cli/compare_command.hpp"
#include "cli/config_file.hpp"
#include "cli/gen_trace_command.hpp"
#include "cli/merge_command.hpp"
#include "cli/mrc_command.hpp"
#include "cli/report_command.hpp"
#include "cli/run_command.hpp"
#include "cli/scenarios_command.hpp"
#include "kvbench/bash_completion.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/log.hpp"
#include "kvbench/option_reference.hpp"
#include "kvbench/usage_error.hpp"
#include "kvbench/version.hpp"
#include "report/report.hpp"
#include "util/utf8.hpp"
#include "workload/scenario.hpp"

namespace kv::drive {
namespace {

// Every error is one line on stderr, whatever the message holds.
int usage_error(const std::string& what) {
  std::cerr << "kvdrive: " << one_printable_line(what) << "\n";
  return kExitUsage;
}

// Every argument must be UTF-8: names, prefixes, URIs and paths reach JSON and the results
// file as text, where invalid bytes made the --json summary something no parser accepts.
// The message names the option (the argument itself, or the option it is the value of).
void check_arguments_utf8(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string what = "argument " + std::to_string(i);
    const size_t eq = arg.find('=');
    if (arg.rfind("--", 0) == 0 && eq != std::string_view::npos) {
      what = std::string(arg.substr(0, eq));
      arg.remove_prefix(eq + 1);
    } else if (arg.rfind('-', 0) == 0) {
      what = std::string(arg);
    } else if (i > 1 && argv[i - 1][0] == '-') {
      what = argv[i - 1];
    }
    std::string problem = utf8_problem(arg);
    if (!problem.empty()) throw UsageError(what + ": " + problem + " (text options must be UTF-8)");
  }
}

}  // namespace

namespace {

// kvdrive's bash completion: the options of `app`, with the values worth offering.
void print_bash_completion(CLI::App& app) {
  std::string names;
  for (const auto& sc : shipped_scenarios()) names += std::string(" ") + sc.name;
  std::string tables;
  for (const auto& t : csv_table_names()) tables += (tables.empty() ? "" : " ") + t;
  std::cout << bash_completion(
      app, "kvdrive",
      {{"--log-level", "debug info warn error off"},
       {"--protocol", "redis resp2 memcache_text memcache_binary"},
       {"--phases", "load,read load,read,mixed load,mixed read mixed load"},
       {"--key-pattern", "sequential uniform gaussian zipf zipf:1.2 R:R S:S G:G Z:Z"},
       {"--target", "redis:// rediss:// redis+cluster:// memcached://"},
       {"--wire-start", "call kernel"},
       {"--io", "auto epoll uring"},
       {"--scenario", names.substr(1)}},
      {{"report", tables}, {"merge", "file"}});
}

constexpr const char* kFooter =
    "Exit codes: 0 done, 1 a store unreachable or the run failed, 2 bad arguments (nothing\n"
    "written), 4 check found a regression, 5 check could not tell, 130 interrupted (what was\n"
    "measured is kept; the run is marked interrupted).";

// The exit for a parse error: --help and --version print and exit 0; anything else is one line
// naming the problem (its config file and line where it came from one), exit 2.
int parse_error_exit(const CLI::ParseError& e, CLI::App& app, const ConfigOption& config, int argc,
                     char** argv) {
  if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
  if (!config.file->problem.empty()) return usage_error(config.file->problem);
  if (dynamic_cast<const CLI::ConfigError*>(&e) != nullptr ||
      (dynamic_cast<const CLI::FileError*>(&e) != nullptr && config.option->count() > 0))
    return usage_error(config_error_text(e, config));
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && app.get_subcommands().empty()) {
    std::vector<std::string> rest = app.remaining();
    return usage_error((rest.empty() ? std::string("missing subcommand")
                                     : "unknown subcommand '" + rest.front() + "'") +
                       " (expected run, report, compare, check, mrc, gen-trace, merge or "
                       "scenarios; see kvdrive --help)");
  }
  return usage_error(with_config_origin(e.what(), argc, argv, *config.file));
}

}  // namespace

int kvdrive_main(int argc, char** argv) {
  set_log_program("kvdrive");
  CLI::App app{
      "kvdrive: set/get load driver for Redis- and memcached-protocol stores.\n"
      "Results go into a SQLite file beside kvmon's samples."};
  app.require_subcommand(1);
  const ConfigOption config = add_config_option(app);
  app.set_version_flag("--version", std::string("kvdrive ") + version());
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "debug, info, warn, error or off")
      ->type_name("LEVEL")
      ->capture_default_str();
  RunCommand run(app);
  ScenariosCommand scenarios(app);
  ReportCommand report(app);
  MergeCommand merge(app);
  CompareCommand compare(app);
  CheckCommand check(app);
  MrcCommand mrc(app);
  GenTraceCommand gen_trace(app);
  // --log-level also after the subcommand (`kvdrive run ... --log-level debug`).
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    sub->add_option("--log-level", log_level, "debug, info, warn, error or off")
        ->type_name("LEVEL")
        ->capture_default_str();
  app.footer(kFooter);

  // The option reference, from the definition above (docs/kvdrive-options.md).
  if (argc == 2 && std::string_view(argv[1]) == "--options-reference") {
    std::cout << options_reference(app, "kvdrive");
    return 0;
  }
  // The bash completion, from the definition above (packaging/kvdrive.bash-completion).
  if (argc == 2 && std::string_view(argv[1]) == "--bash-completion") {
    print_bash_completion(app);
    return 0;
  }
  // Parse and check everything that needs no store: any problem is bad input (exit 2).
  try {
    check_arguments_utf8(argc, argv);
    app.parse(argc, argv);
    set_log_level(parse_log_level(log_level));
    check_config_option(config);
    if (run.parsed()) run.check(argc, argv);
    if (report.parsed()) report.check();
    if (merge.parsed()) merge.check();
    if (compare.parsed()) compare.check();
    if (check.parsed()) check.check();
    if (mrc.parsed()) mrc.check(argc, argv);
    if (gen_trace.parsed()) gen_trace.check();
  } catch (const CLI::ParseError& e) {
    return parse_error_exit(e, app, config, argc, argv);
  } catch (const UsageError& e) {
    return usage_error(with_config_origin(e.what(), argc, argv, *config.file));
  }

  try {
    if (run.parsed()) return run.execute(argc, argv);
    if (scenarios.parsed()) return scenarios.execute();
    if (merge.parsed()) return merge.execute();
    if (compare.parsed()) return compare.execute();
    if (check.parsed()) return check.execute();
    if (mrc.parsed()) return mrc.execute();
    if (gen_trace.parsed()) return gen_trace.execute();
    return report.execute();
  } catch (const UsageError& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    std::cerr << "kvdrive: " << one_printable_line(e.what()) << "\n";
    return kExitFailed;
  }
}

}  // namespace kv::drive
