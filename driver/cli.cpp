#include "cli.hpp"

#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <atomic>
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

}  // namespace

int kvdrive_main(int argc, char** argv) {
  set_log_program("kvdrive");
  CLI::App app{"kvdrive: set/get load driver for Redis- and memcached-protocol stores.\n"
               "Results go into a SQLite file beside kvmon's samples."};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("kvdrive ") + version());
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "debug, info, warn, error or off")->capture_default_str();

  RunOptions opts;
  std::string keys = "100000", value_size = "100", timeout = "5s", ttl = "0";
  auto* run = app.add_subcommand("run", "Benchmark one or more stores, one after another");
  run->add_option("--db", opts.db_path, "Results file (SQLite; created if missing)")->required();
  run->add_option("--target", opts.targets,
                  "Store URI, repeatable: redis://[user:password@]host:port[/db] or\n"
                  "memcached://host:port[,host:port...][?protocol=binary][&nodelay=0]")
      ->required();
  run->add_option("--name", opts.name, "A name for the run");
  run->add_option("--keys", keys, "Number of keys (100k, 5M ...)")
      ->capture_default_str()
      ->check(parsed_by(parse_count, "COUNT"));
  run->add_option("--value-size", value_size, "Value size in bytes (100, 20KB, 1M ...)")
      ->capture_default_str()
      ->check(parsed_by(parse_size, "SIZE"));
  run->add_option("--threads", opts.workload.threads, "Worker threads, one connection each")
      ->capture_default_str()
      ->check(CLI::Range(1, 1024));
  run->add_option("--key-prefix", opts.workload.key_prefix, "Prefix of every key")->capture_default_str();
  run->add_option("--timeout", timeout, "Per-request and connect timeout")
      ->capture_default_str()
      ->check(parsed_by(parse_duration_us, "DURATION"));
  run->add_option("--ttl", ttl, "Expiry of the values written (0: none)")
      ->capture_default_str()
      ->check(parsed_by(parse_duration_us, "DURATION"));

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
      opts.workload.keys = parse_count(keys);
      opts.workload.value_size = parse_size(value_size);
      if (opts.workload.keys == 0) throw std::invalid_argument("--keys must be at least 1");
      if (opts.workload.value_size == 0 || opts.workload.value_size > (64u << 20))
        throw std::invalid_argument("--value-size must be from 1 byte to 64 MiB");
      if (static_cast<uint64_t>(opts.workload.threads) > opts.workload.keys)
        throw std::invalid_argument("--threads must not exceed --keys");
      opts.client.timeout_us = parse_duration_us(timeout);
      if (opts.client.timeout_us < 1000) throw std::invalid_argument("--timeout must be at least 1ms");
      opts.workload.ttl_s = static_cast<uint32_t>(parse_duration_us(ttl) / 1'000'000);
      opts.command_line = join_command_line(argc, argv);
      opts.progress = true;
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
