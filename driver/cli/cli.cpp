#include "cli/cli.hpp"

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>

#include "cli/output_file.hpp"
#include "cli/run_output.hpp"
#include "engine/run.hpp"
#include "engine/run_watcher.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "kvbench/version.hpp"
#include "report/html_report.hpp"
#include "report/report.hpp"
#include "store/target_uri.hpp"
#include "util/text_file.hpp"
#include "util/utf8.hpp"
#include "workload/scenario.hpp"
#include "workload/workload_options.hpp"

namespace kv::drive {
namespace {

std::atomic<bool> g_stop{false};  // the one mutable global: set by SIGINT/SIGTERM

void on_signal(int) {
  if (g_stop.exchange(true)) leave_now_on_signal();  // a second Ctrl-C: leave now, marked
}

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// CLI11 validators that use kvbench's own parsers, so errors name the option and the value.
template <typename Parse>
CLI::Validator parsed_by(Parse parse, const char* what) {
  return CLI::Validator(
      [parse](std::string& s) -> std::string {
        try {
          parse(s);
          return {};
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      what);
}

CLI::Validator non_empty() {
  return CLI::Validator(
      [](std::string& s) -> std::string { return s.empty() ? "must not be empty" : ""; }, "");
}

double parse_scale(std::string_view text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !(v > 0) || v > 1000)
    throw std::invalid_argument("invalid scale '" + std::string(text) +
                                "': expected a number above 0 and at most 1000");
  return v;
}

// The --config file as kvdrive read it: bounded, checked, BOM dropped, each key's line.
struct ConfigFile {
  std::string path;
  std::string text;
  std::map<std::string, int> key_lines;  // "run.keys" -> line number
  std::string problem;                   // set when the file is refused
};

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string unquoted(std::string_view s) {
  if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') && s.back() == s.front())
    s = s.substr(1, s.size() - 2);
  return std::string(s);
}

// Each key's line, as CLI11 will read the file (sections, `key = value`, multi-line arrays,
// comments). CLI11 would take a key given twice as two values ("At Most 1 required but
// received 2", naming neither file nor line): refused here, naming both lines.
std::map<std::string, int> config_key_lines(std::string_view text, const std::string& file) {
  std::map<std::string, int> lines;
  std::string section;
  bool in_array = false;
  int line_no = 0;
  while (!text.empty()) {
    ++line_no;
    auto nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (in_array) {
      if (line.find(']') != std::string_view::npos) in_array = false;
      continue;
    }
    if (line.empty() || line.front() == '#' || line.front() == ';') continue;
    if (line.front() == '[') {
      auto close = line.find(']');
      section =
          unquoted(trim(line.substr(1, close == std::string_view::npos ? line.npos : close - 1)));
      continue;
    }
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;  // CLI11 says what it makes of it
    std::string_view value = trim(line.substr(eq + 1));
    if (!value.empty() && value.front() == '[' && value.find(']') == std::string_view::npos)
      in_array = true;
    std::string key = unquoted(trim(line.substr(0, eq)));
    std::string full = section.empty() ? key : section + "." + key;
    auto [it, fresh] = lines.emplace(full, line_no);
    if (!fresh)
      throw std::invalid_argument("--config '" + file + "': key '" + key + "'" +
                                  (section.empty() ? "" : " in [" + section + "]") + " on line " +
                                  std::to_string(it->second) + " and again on line " +
                                  std::to_string(line_no));
  }
  return lines;
}

// A message about an option ("invalid --keys 'x': ...") whose value came from the config
// file, not the command line, also names the file and the line.
std::string with_config_origin(const std::string& what, int argc, char** argv,
                               const ConfigFile& file) {
  if (file.path.empty()) return what;
  auto at = what.find("--");
  if (at == std::string::npos) return what;
  size_t end = at + 2;
  while (end < what.size() &&
         (std::isalnum(static_cast<unsigned char>(what[end])) || what[end] == '-'))
    ++end;
  const std::string option = what.substr(at, end - at);
  if (option.size() <= 2 || option == "--config") return what;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == option || arg.rfind(option + "=", 0) == 0) return what;  // typed on the command line
  }
  for (const auto& [key, line] : file.key_lines) {
    auto dot = key.rfind('.');
    if (key.substr(dot == std::string::npos ? 0 : dot + 1) == option.substr(2))
      return what + " (from --config '" + file.path + "', line " + std::to_string(line) + ")";
  }
  return what;
}

// CLI11's TOML reader, fed the text kvdrive read and checked instead of reading the file again.
class CheckedConfig : public CLI::ConfigTOML {
 public:
  explicit CheckedConfig(std::shared_ptr<const ConfigFile> file) : file_(std::move(file)) {}
  std::vector<CLI::ConfigItem> from_config(std::istream&) const override {
    std::istringstream in(file_->text);
    return CLI::ConfigTOML::from_config(in);
  }

 private:
  std::shared_ptr<const ConfigFile> file_;
};

// CLI11's messages about config files name neither the file nor the key plainly: say both.
std::string config_error_text(const CLI::ParseError& e, const std::string& file,
                              const std::map<std::string, int>& key_lines) {
  auto line_of = [&](const std::string& full) {
    auto it = key_lines.find(full);
    return it == key_lines.end() ? std::string() : " (line " + std::to_string(it->second) + ")";
  };
  namespace fs = std::filesystem;
  std::string what = e.what();
  if (dynamic_cast<const CLI::FileError*>(&e) != nullptr) {
    std::error_code ec;
    if (fs::is_directory(file, ec)) return "--config '" + file + "': is a directory";
    if (!fs::exists(file, ec)) return "--config '" + file + "': no such file";
    return "--config '" + file + "': cannot read it";
  }
  constexpr std::string_view extras = "INI was not able to parse ";
  if (what.rfind(extras, 0) != 0) return "--config '" + file + "': " + what;
  std::string item = what.substr(extras.size());
  if (item.size() > 3 && item.ends_with(".++"))
    return "--config '" + file + "': unknown section [" + item.substr(0, item.size() - 3) +
           "] (options of `kvdrive run` go under [run])";
  auto dot = item.rfind('.');
  if (dot == std::string::npos)
    return "--config '" + file + "': unknown key '" + item + "' outside a section" + line_of(item) +
           " (options of `kvdrive run` go under [run])";
  return "--config '" + file + "': unknown key '" + item.substr(dot + 1) + "' in [" +
         item.substr(0, dot) + "]" + line_of(item);
}

// Every error is one line on stderr, whatever the message holds.
int usage_error(std::string what) {
  for (char& c : what)
    if (c == '\n' || c == '\r') c = ' ';
  std::cerr << "kvdrive: " << what << "\n";
  return kExitUsage;
}

// The command line as stored in the results file: passwords in redis:// URIs become ***.
std::string redacted_command_line(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) args.push_back(redact_uri_passwords(argv[i]));
  std::vector<const char*> ptrs;
  for (const auto& a : args) ptrs.push_back(a.c_str());
  return join_command_line(argc, ptrs.data());
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
    } else if (arg.rfind("-", 0) == 0) {
      what = std::string(arg);
    } else if (i > 1 && argv[i - 1][0] == '-') {
      what = argv[i - 1];
    }
    std::string problem = utf8_problem(arg);
    if (!problem.empty())
      throw std::invalid_argument(what + ": " + problem + " (text options must be UTF-8)");
  }
}

// Every connection may hold --pipeline values of the largest size in its buffers at once: more
// than the machine's memory can only end in the OOM killer (64M x --pipeline 4096 is 256 GiB
// per connection), so it is refused before anything starts.
void check_bytes_in_flight(const WorkloadSpec& w, int processes) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  const double in_flight =
      static_cast<double>(w.values.largest()) * w.pipeline * w.connections * w.threads * processes;
  if (in_flight > memory)
    throw std::invalid_argument(
        "--value-size " + format_size(w.values.largest()) + " x --pipeline " +
        std::to_string(w.pipeline) + " x --connections " + std::to_string(w.connections) +
        " x --threads " + std::to_string(w.threads) +
        (processes > 1 ? " x --processes " + std::to_string(processes) : std::string()) + " = " +
        format_size(static_cast<uint64_t>(in_flight)) +
        " in flight, more than this machine's memory (" +
        format_size(static_cast<uint64_t>(memory)) + ")");
}

// memcached reads an expiry above 30 days as a Unix time, which would be long past: every value
// would expire at once while the run looks fine.
void check_memcached_ttl(const std::vector<TargetSpec>& specs, const std::vector<RunStep>& steps) {
  constexpr uint32_t kMemcachedMaxRelativeTtlS = 30 * 86'400;
  for (const auto& spec : specs) {
    if (spec.protocol != Protocol::memcached) continue;
    for (const auto& step : steps)
      if (step.workload.ttl_s > kMemcachedMaxRelativeTtlS)
        throw std::invalid_argument(
            "--ttl " + format_duration_us(int64_t{step.workload.ttl_s} * 1'000'000) + ": " +
            spec.display +
            " reads an expiry above 30 days as a Unix time (long past); at most "
            "720h for memcached targets");
  }
}

void list_scenarios(std::ostream& out) {
  for (const auto& e : shipped_scenarios()) {
    Scenario s = parse_scenario(e.name, e.text);
    out << e.name << "\n    " << s.description << " (" << s.steps.size()
        << (s.steps.size() == 1 ? " step" : " steps") << ")\n";
  }
}

}  // namespace

int kvdrive_main(int argc, char** argv) {
  set_log_program("kvdrive");
  CLI::App app{
      "kvdrive: set/get load driver for Redis- and memcached-protocol stores.\n"
      "Results go into a SQLite file beside kvmon's samples."};
  app.require_subcommand(1);
  CLI::Option* config =
      app.set_config("--config", "",
                     "Read options from a TOML or INI file: long option names as keys, "
                     "under a [run] section for `kvdrive run`");
  app.allow_config_extras(CLI::config_extras_mode::error);
  // The file is read (bounded, checked) when CLI11 first asks for the option's value, before it
  // opens the file itself: a FIFO or /dev/zero never reaches CLI11's unbounded reader.
  auto config_file = std::make_shared<ConfigFile>();
  app.config_formatter(std::make_shared<CheckedConfig>(config_file));
  config->check(CLI::Validator(
      [config_file](std::string& path) -> std::string {
        if (path.empty()) return {};
        try {
          config_file->path = path;
          config_file->text = read_text_file("--config", path);
          config_file->key_lines = config_key_lines(config_file->text, path);
          return {};
        } catch (const std::invalid_argument& e) {
          config_file->problem = e.what();
          return e.what();
        }
      },
      ""));
  app.set_version_flag("--version", std::string("kvdrive ") + version());
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "debug, info, warn, error or off")
      ->capture_default_str();

  RunOptions opts;
  std::string timeout = "5s", scenario, scale_text, max_errors, processes, process_index;
  std::string give_up = "30s", run_percentiles, run_json_out;
  RunOutputs run_outputs;
  auto* run = app.add_subcommand("run", "Benchmark one or more stores, one after another");
  run->add_option("--db", opts.db_path, "Results file (SQLite; created if missing)")
      ->required()
      ->check(non_empty());
  run->add_option("--target", opts.targets,
                  "Store URI, repeatable: redis://[user:password@]host:port[/db] or\n"
                  "memcached://host:port[,host:port...][?protocol=binary][&nodelay=0]")
      ->required();
  run->add_option("--name", opts.name, "A name for the run");
  run->add_option("--scenario", scenario,
                  "A shipped scenario (see `kvdrive scenarios`) or a scenario file; options given "
                  "here override its values")
      ->check(non_empty());
  run->add_option("--scale", scale_text, "Scenario size factor: keys, requests and durations x F")
      ->check(parsed_by(parse_scale, "F"));
  // The workload options, from the one table that scenario files use too.
  std::vector<std::pair<const WorkloadOption*, CLI::Option*>> workload_cli;
  std::map<std::string, std::string> workload_text;
  std::map<std::string, bool> workload_flags;
  for (const auto& o : workload_options()) {
    std::string help = o.help;
    CLI::Option* opt = nullptr;
    if (o.flag) {
      opt = run->add_flag("--" + std::string(o.name), workload_flags[o.name], help);
    } else {
      help += std::string(" [default: ") + o.default_text + "]";
      opt = run->add_option("--" + std::string(o.name), workload_text[o.name], help);
    }
    workload_cli.emplace_back(&o, opt);
  }
  run->add_option("--timeout", timeout, "Per-request and connect timeout")
      ->capture_default_str()
      ->check(parsed_by(parse_duration_us, "DURATION"));
  run->add_option("--max-errors", max_errors,
                  "Fail the run once this many requests failed (0: never)")
      ->check(parsed_by(parse_count, "N"));
  run->add_option("--give-up-after", give_up,
                  "Fail a phase when requests kept failing and none was answered for this long "
                  "(a store that died for good; 0: never)")
      ->capture_default_str()
      ->check(parsed_by(parse_duration_us, "DURATION"));
  run->add_flag("--json", opts.json, "Print the summary as JSON");
  run->add_option("--percentiles", run_percentiles,
                  "Latency percentiles shown per phase, e.g. 50,90,99,99.9,99.99 (the max is "
                  "always shown) [default: 50,90,99,99.9]")
      ->check(parsed_by(parse_percentiles, "LIST"));
  run->add_option("--json-out", run_json_out,
                  "Also write the run as one JSON document to this file (docs/output-fields.md)")
      ->check(non_empty());
  run->add_option("--monitor", opts.monitors,
                  "kvmon HOST:PORT (kvmon --listen) to pull samples from into the results file, "
                  "in kvdrive's time base; repeatable");
  run->add_option("--monitor-token-file", opts.monitor_token_file,
                  "File whose first line is the token kvmon requires")
      ->check(non_empty());
  run->add_option("--processes", processes,
                  "Run as N kvdrive processes sharing the workload (one run each, one group); "
                  "1 to 256")
      ->check(non_empty());
  run->add_option("--run-group", opts.run_group)->group("");  // set for the group's processes
  run->add_option("--process-index", process_index)->group("")->check(non_empty());
  run->add_flag("--monitor-optional", opts.monitor_optional,
                "Go on (with a warning) if a kvmon cannot be reached");

  auto* scenarios = app.add_subcommand("scenarios", "List the shipped scenarios");

  std::string report_db;
  std::vector<std::string> report_runs_text;
  std::vector<int64_t> report_run_ids;
  std::string report_format = "text", report_html, report_percentiles, report_json_out, report_out,
              report_table;
  PercentileList report_list = default_percentiles();
  auto* report = app.add_subcommand("report", "Print the results recorded in a file");
  report->add_option("--db", report_db, "Results file")->required();
  report->add_option(
      "--run", report_runs_text,
      "Only this run id; repeat it to compare runs side by side (ratios to the first)");
  report->add_option("--format", report_format, "Tables as text, csv or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "csv", "json"}));
  report
      ->add_option("--html", report_html,
                   "Also write one self-contained HTML page with charts (SVG) to this file")
      ->check(non_empty());
  report
      ->add_option("--percentiles", report_percentiles,
                   "Latency percentiles shown per phase, e.g. 50,90,99,99.9,99.99 (the max is "
                   "always shown) [default: 50,90,99,99.9]")
      ->check(parsed_by(parse_percentiles, "LIST"));
  report
      ->add_option("--json-out", report_json_out,
                   "Also write the runs as one JSON document to this file (docs/output-fields.md)")
      ->check(non_empty());
  report
      ->add_option("--out", report_out,
                   "With --format csv: write every table to DIR/TABLE.csv (the directory must "
                   "exist)")
      ->check(non_empty());
  report->add_option("table", report_table,
                     "With --format csv: the one table to print (runs, stores, phases, steps, "
                     "server, timeline, process_samples, host_samples, events, comparison)");

  app.footer(
      "Exit codes: 0 done, 1 a store unreachable or the run failed, 2 bad arguments (nothing\n"
      "written), 130 interrupted (what was measured is kept; the run is marked interrupted).");
  try {
    check_arguments_utf8(argc, argv);
    app.parse(argc, argv);
    set_log_level(parse_log_level(log_level));
    if (config->count() > 0 && config->as<std::string>().empty())
      throw std::invalid_argument("--config: empty file name");
    if (run->parsed()) {
      std::vector<std::pair<std::string, std::string>> overrides;
      for (const auto& [o, cli] : workload_cli) {
        if (cli->count() == 0) continue;
        overrides.emplace_back(o->name, o->flag ? (workload_flags[o->name] ? "true" : "false")
                                                : workload_text[o->name]);
      }
      Scenario sc = scenario.empty() ? Scenario{"", "", {}, {{"", {}}}} : load_scenario(scenario);
      const double scale = scale_text.empty() ? 1.0 : parse_scale(scale_text);
      if (scenario.empty() && !scale_text.empty())
        throw std::invalid_argument("--scale applies to a --scenario");
      opts.steps = expand_scenario(sc, WorkloadSpec{}, overrides, scale);
      if (!max_errors.empty()) opts.max_errors = parse_count(max_errors);
      opts.give_up_us = parse_duration_us(give_up);
      if (!processes.empty())
        opts.process_count = static_cast<int>(parse_whole_number("--processes", processes, 1, 256));
      if (!process_index.empty())
        opts.process_index =
            static_cast<int>(parse_whole_number("--process-index", process_index, 0, 255));
      if (opts.process_index < 0 || opts.process_index >= opts.process_count)
        throw std::invalid_argument("--process-index must be below --processes");
      for (auto& step : opts.steps) {
        step.workload.process_index = opts.process_index;
        step.workload.process_count = opts.process_count;
        check_bytes_in_flight(step.workload, opts.process_count);
      }
      opts.scenario = scenario;
      opts.scale = scale;
      opts.client.timeout_us = parse_duration_us(timeout);
      if (opts.client.timeout_us < 1000)
        throw std::invalid_argument("invalid --timeout '" + timeout + "': must be at least 1ms");
      // libmemcached keeps it as an int32 of milliseconds (24.8 days); a day is already far
      // beyond any request worth waiting for.
      if (opts.client.timeout_us > 86'400'000'000)
        throw std::invalid_argument("invalid --timeout '" + timeout + "': at most 24h");
      opts.command_line = redacted_command_line(argc, argv);
      if (!run_percentiles.empty()) run_outputs.percentiles = parse_percentiles(run_percentiles);
      if (!run_json_out.empty()) {
        if (opts.process_count > 1)
          throw std::invalid_argument("--json-out is not available with --processes yet");
        check_output_path("--json-out", run_json_out);
        check_not_results_file("--json-out", run_json_out, opts.db_path);
        run_outputs.json_out = run_json_out;
      }
      opts.progress = !opts.json;
      check_memcached_ttl(check_run_options(opts), opts.steps);
    }
    if (report->parsed()) {
      check_results_path("--db", report_db, true);
      for (const auto& id : report_runs_text)
        report_run_ids.push_back(parse_whole_number("--run", id, 1, INT64_MAX));
      if (!report_html.empty()) {
        check_output_path("--html", report_html);
        check_not_results_file("--html", report_html, report_db);
      }
      if (!report_json_out.empty()) {
        check_output_path("--json-out", report_json_out);
        check_not_results_file("--json-out", report_json_out, report_db);
      }
      if (!report_percentiles.empty()) report_list = parse_percentiles(report_percentiles);
      const ReportFormat format = parse_report_format(report_format);
      if (format != ReportFormat::csv && (!report_out.empty() || !report_table.empty()))
        throw std::invalid_argument(std::string(report_out.empty() ? "a table name" : "--out") +
                                    " goes with --format csv");
      if (!report_out.empty() && !report_table.empty())
        throw std::invalid_argument("--out writes every table: give it or a table name, not both");
      if (format == ReportFormat::csv && report_out.empty() && report_table.empty())
        throw std::invalid_argument(
            "--format csv prints one table: name it (kvdrive report --format csv phases) or "
            "write every table with --out DIR");
      if (!report_table.empty()) {
        const auto& names = csv_table_names();
        if (std::find(names.begin(), names.end(), report_table) == names.end())
          throw std::invalid_argument("unknown table '" + report_table + "'");
      }
      if (!report_out.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(report_out, ec))
          throw std::invalid_argument("--out '" + report_out + "': not a directory");
      }
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    if (!config_file->problem.empty()) return usage_error(config_file->problem);
    if (dynamic_cast<const CLI::ConfigError*>(&e) != nullptr ||
        (dynamic_cast<const CLI::FileError*>(&e) != nullptr && config->count() > 0))
      return usage_error(config_error_text(
          e, config->results().empty() ? "" : config->results().front(), config_file->key_lines));
    if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && app.get_subcommands().empty()) {
      std::vector<std::string> rest = app.remaining();
      return usage_error((rest.empty() ? std::string("missing subcommand")
                                       : "unknown subcommand '" + rest.front() + "'") +
                         " (expected run, report or scenarios; see kvdrive --help)");
    }
    return usage_error(with_config_origin(e.what(), argc, argv, *config_file));
  } catch (const std::invalid_argument& e) {
    return usage_error(with_config_origin(e.what(), argc, argv, *config_file));
  }

  try {
    if (run->parsed()) {
      install_signal_handlers();
      if (opts.process_count > 1 && opts.run_group.empty()) {
        opts.run_group =
            (opts.name.empty() ? "group" : opts.name) + "-" + std::to_string(now_ts_us());
        GroupRecord group = run_process_group(opts, argc, argv);
        return print_group_record(group, opts, std::cout);
      }
      opts.quiet = opts.quiet || !opts.run_group.empty();
      opts.progress = opts.progress && opts.run_group.empty();
      RunRecord rec = run_benchmark(opts, g_stop);
      return print_run_record(rec, opts, std::cout, run_outputs);
    }
    if (scenarios->parsed()) {
      list_scenarios(std::cout);
      return kExitOk;
    }
    // A file that can be written is opened as usual (which also marks runs whose kvdrive
    // died); one on a read-only filesystem or in a read-only directory is only read.
    Database db = results_file_writable(report_db) ? open_results_db(report_db)
                                                   : open_results_read_only(report_db);
    if (db.user_version() < schema::latest_version())
      throw std::invalid_argument("--db '" + report_db + "': schema version " +
                                  std::to_string(db.user_version()) + " cannot be upgraded to " +
                                  std::to_string(schema::latest_version()) + " read-only");
    report_runs(db, report_run_ids);  // every listed run exists, before any file is written
    if (!report_html.empty()) {
      write_file_atomically(
          report_html, [&](std::ostream& html) { write_html_report(db, report_run_ids, html); },
          [&] { check_not_results_file("--html", report_html, report_db); });
      std::cerr << "kvdrive: wrote " << report_html << "\n";
    }
    const PercentileList& list = report_list;
    if (!report_json_out.empty()) {
      write_file_atomically(
          report_json_out,
          [&](std::ostream& o) { write_json_document(db, report_run_ids, list, o); },
          [&] { check_not_results_file("--json-out", report_json_out, report_db); });
      std::cerr << "kvdrive: wrote " << report_json_out << "\n";
    }
    if (!report_out.empty()) {
      for (const auto& name : csv_table_names()) {
        std::ostringstream csv;
        print_csv_table(db, report_run_ids, name, list, csv);
        if (csv.str().empty()) continue;
        const std::string path = (std::filesystem::path(report_out) / (name + ".csv")).string();
        check_not_results_file("--out", path, report_db);
        write_file_atomically(
            path, [&](std::ostream& o) { o << csv.str(); },
            [&] { check_not_results_file("--out", path, report_db); });
        std::cerr << "kvdrive: wrote " << path << "\n";
      }
      return kExitOk;
    }
    print_report(db, report_run_ids, parse_report_format(report_format), std::cout, list,
                 report_table);
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    return usage_error(e.what());
  } catch (const std::exception& e) {
    std::cerr << "kvdrive: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace kv::drive
