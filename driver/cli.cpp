#include "cli.hpp"

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
#include <charconv>
#include <iostream>

#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "kvbench/version.hpp"
#include "report.hpp"
#include "run.hpp"

namespace kv::drive {
namespace {

std::atomic<bool> g_stop{false};  // the one mutable global: set by SIGINT/SIGTERM

void on_signal(int) {
  if (g_stop.exchange(true)) _exit(kExitInterrupted);  // a second Ctrl-C: leave now
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

uint32_t parse_ratio_part(std::string_view text, std::string_view whole) {
  uint32_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || v > 1'000'000)
    throw std::invalid_argument("invalid --ratio '" + std::string(whole) +
                                "': expected SETS:GETS such as 1:10");
  return v;
}

// Turns the text options into the workload and checks how they combine.
void fill_workload(WorkloadSpec& w, const std::string& keys, const std::string& value_size,
                   const std::string& phases, const std::string& pattern,
                   const std::string& requests, const std::string& duration,
                   const std::string& ratio, const std::string& warmup, const std::string& ttl) {
  w.keys = parse_count(keys);
  if (w.keys == 0) throw std::invalid_argument("--keys must be at least 1");
  w.values = parse_value_sizes(value_size);
  w.phases = parse_phases(phases);
  w.pattern = parse_key_pattern(pattern);
  w.requests = parse_count(requests);
  w.duration_us = parse_duration_us(duration);
  w.warmup_us = parse_duration_us(warmup);
  auto colon = ratio.find(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("invalid --ratio '" + ratio + "': expected SETS:GETS such as 1:10");
  w.ratio_sets = parse_ratio_part(std::string_view(ratio).substr(0, colon), ratio);
  w.ratio_gets = parse_ratio_part(std::string_view(ratio).substr(colon + 1), ratio);
  if (w.ratio_sets + w.ratio_gets == 0) throw std::invalid_argument("--ratio must not be 0:0");
  if (static_cast<uint64_t>(w.threads) > w.keys)
    throw std::invalid_argument("--threads (" + std::to_string(w.threads) +
                                ") must not exceed --keys (" + std::to_string(w.keys) + ")");
  int64_t ttl_us = parse_duration_us(ttl);
  if (ttl_us % 1'000'000 != 0) throw std::invalid_argument("--ttl must be whole seconds");
  w.ttl_s = static_cast<uint32_t>(ttl_us / 1'000'000);
  if (w.rate > 0 && (w.connections > 1 || w.pipeline > 1))
    throw std::invalid_argument("--rate works with --connections 1 and --pipeline 1 (one "
                                "scheduled request at a time per thread); use more --threads");
  if (w.duration_us > 0 && w.warmup_us >= w.duration_us)
    throw std::invalid_argument("--warmup must be shorter than --duration");
}

}  // namespace

int kvdrive_main(int argc, char** argv) {
  set_log_program("kvdrive");
  CLI::App app{"kvdrive: set/get load driver for Redis- and memcached-protocol stores.\n"
               "Results go into a SQLite file beside kvmon's samples."};
  app.require_subcommand(1);
  app.set_config("--config", "", "Read options from a TOML or INI file: long option names as keys, "
                 "under a [run] section for `kvdrive run`");
  app.allow_config_extras(CLI::config_extras_mode::error);
  app.set_version_flag("--version", std::string("kvdrive ") + version());
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "debug, info, warn, error or off")->capture_default_str();

  RunOptions opts;
  WorkloadSpec& w = opts.workload;
  std::string keys = "100000", value_size = "100", timeout = "5s", ttl = "0", phases = "load,read";
  std::string pattern = "sequential", requests = "0", duration = "0", ratio = "1:10", warmup = "0";
  auto* run = app.add_subcommand("run", "Benchmark one or more stores, one after another");
  run->add_option("--db", opts.db_path, "Results file (SQLite; created if missing)")->required();
  run->add_option("--target", opts.targets,
                  "Store URI, repeatable: redis://[user:password@]host:port[/db] or\n"
                  "memcached://host:port[,host:port...][?protocol=binary][&nodelay=0]")
      ->required();
  run->add_option("--name", opts.name, "A name for the run");
  run->add_option("--phases", phases, "Phases in order: load (set every key once), read, mixed")
      ->capture_default_str()
      ->check(parsed_by(parse_phases, "PHASES"));
  run->add_option("--keys", keys, "Number of keys (100k, 5M ...)")
      ->capture_default_str()
      ->check(parsed_by(parse_count, "COUNT"));
  run->add_option("--value-size", value_size,
                  "Value size: fixed (100, 20KB), a range (100-1000) or weighted (1K:60,10K:40)")
      ->capture_default_str()
      ->check(parsed_by(parse_value_sizes, "SIZE"));
  run->add_option("--key-pattern", pattern,
                  "Keys of read/mixed phases: sequential, uniform, gaussian, zipf[:EXPONENT]")
      ->capture_default_str()
      ->check(parsed_by(parse_key_pattern, "PATTERN"));
  run->add_option("--requests", requests, "Requests per read/mixed phase (default: one per key)")
      ->check(parsed_by(parse_count, "COUNT"));
  run->add_option("--duration", duration, "Length of each read/mixed phase (instead of --requests)")
      ->check(parsed_by(parse_duration_us, "DURATION"));
  run->add_option("--ratio", ratio, "Mixed phases: sets:gets")->capture_default_str();
  run->add_option("--hit-rate", w.hit_rate, "Fraction of gets aimed at keys that exist (0-1)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  run->add_flag("--verify", w.verify, "Check every value read against what was written");
  run->add_option("--rate", w.rate,
                  "Open loop: requests/s over all threads, latency from the intended send time")
      ->check(CLI::Range(0.0, 1e9));
  run->add_option("--warmup", warmup, "Leading time of each phase left out of summaries");
  run->add_option("--threads", w.threads, "Worker threads, one connection each")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  run->add_option("--connections", w.connections, "Connections per thread (Redis protocol)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  run->add_option("--pipeline", w.pipeline, "Requests in flight per connection (Redis protocol)")
      ->capture_default_str()
      ->check(CLI::Range(1, 4096));
  run->add_option("--key-prefix", w.key_prefix, "Prefix of every key")->capture_default_str();
  run->add_option("--timeout", timeout, "Per-request and connect timeout")
      ->capture_default_str()
      ->check(parsed_by(parse_duration_us, "DURATION"));
  run->add_option("--ttl", ttl, "Expiry of the values written (0: none)")
      ->capture_default_str()
      ->check(parsed_by(parse_duration_us, "DURATION"));
  run->add_option("--max-errors", opts.max_errors,
                  "Fail the run once this many requests failed (0: never)");
  run->add_option("--seed", w.seed, "Seed of the key and value generators")->capture_default_str();
  run->add_flag("--json", opts.json, "Print the summary as JSON");

  std::string report_db;
  int64_t report_run = -1;
  auto* report = app.add_subcommand("report", "Print the results recorded in a file");
  report->add_option("--db", report_db, "Results file")->required()->check(CLI::ExistingFile);
  report->add_option("--run", report_run, "Only this run id");

  app.footer(
      "Exit codes: 0 done, 1 a store unreachable or the run failed, 2 bad arguments (nothing\n"
      "written), 130 interrupted (what was measured is kept; the run is marked interrupted).");
  try {
    app.parse(argc, argv);
    set_log_level(parse_log_level(log_level));
    if (run->parsed()) {
      fill_workload(w, keys, value_size, phases, pattern, requests, duration, ratio, warmup, ttl);
      opts.client.timeout_us = parse_duration_us(timeout);
      if (opts.client.timeout_us < 1000) throw std::invalid_argument("--timeout must be at least 1ms");
      opts.command_line = join_command_line(argc, argv);
      opts.progress = !opts.json;
    }
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    std::cerr << "kvdrive: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::invalid_argument& e) {
    std::cerr << "kvdrive: " << e.what() << "\n";
    return kExitUsage;
  }

  try {
    if (run->parsed()) {
      install_signal_handlers();
      return run_benchmark(opts, g_stop, std::cout);
    }
    Database db = Database::open(report_db);
    schema::migrate(db);
    print_report(db, report_run >= 0 ? std::optional<int64_t>(report_run) : std::nullopt, std::cout);
    return kExitOk;
  } catch (const std::invalid_argument& e) {
    std::cerr << "kvdrive: " << e.what() << "\n";
    return kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "kvdrive: " << e.what() << "\n";
    return kExitFailed;
  }
}

}  // namespace kv::drive
