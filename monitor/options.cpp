#include "options.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "kvbench/bash_completion.hpp"
#include "kvbench/cli_validators.hpp"
#include "kvbench/log.hpp"
#include "kvbench/option_reference.hpp"
#include "kvbench/protocol.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/token_file.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "kvbench/version.hpp"
#include "listener.hpp"

namespace kv::mon {
namespace {

// --listen and friends into `server`; throws UsageError with one clear line.
struct ListenOptions {
  std::string listen, token_file, client_queue = "4MiB", idle_timeout = "60s";
  std::string history, history_max;  // empty: the defaults of HistoryLimits
  std::string metrics;               // --metrics ADDR:PORT
};

// ADDR:PORT or PORT (127.0.0.1) of `option`, "localhost" as 127.0.0.1; a non-loopback address
// needs a token file.
std::pair<std::string, int> listen_address(const char* option, const std::string& value,
                                           bool have_token) {
  std::string text = value.find(':') == std::string::npos ? "127.0.0.1:" + value : value;
  auto hp = proto::split_host_port(text);
  if (!hp) {
    throw UsageError(std::string("invalid ") + option + " '" + value + "': " + hp.error().message);
  }
  std::string address = hp.value().host == "localhost" ? "127.0.0.1" : hp.value().host;
  if (!is_loopback_address(address) && !have_token) {
    throw UsageError(std::string(option) + " '" + value +
                     "' is not a loopback address: it needs --token-file FILE "
                     "(clients must present that token)");
  }
  return {address, hp.value().port};
}

// --listen, --metrics and friends into `server` and `metrics` (one --token-file for both).
void apply_listen_options(const ListenOptions& o, ServerConfig& server, MetricsConfig& metrics,
                          std::vector<std::string>* warnings) {
  server.client_queue_bytes = static_cast<size_t>(parse_size(o.client_queue));
  server.idle_timeout_us = parse_duration_us(o.idle_timeout);
  if (!o.history.empty()) {
    server.history.min_age_us = parse_duration_us(o.history);
    server.history.min_ticks = 1;  // the age alone decides
  }
  if (!o.history_max.empty())
    server.history.max_bytes = static_cast<size_t>(parse_size(o.history_max));
  if (server.max_clients < 1) throw UsageError("--max-clients must be at least 1");
  if (o.listen.empty()) {
    if (!o.token_file.empty() && o.metrics.empty()) {
      throw UsageError("--token-file needs --listen or --metrics");
    }
    if (!o.history.empty()) throw UsageError("--history needs --listen");
    if (!o.history_max.empty()) throw UsageError("--history-max needs --listen");
  } else {
    std::tie(server.address, server.port) =
        listen_address("--listen", o.listen, !o.token_file.empty());
  }
  if (!o.metrics.empty()) {
    std::tie(metrics.address, metrics.port) =
        listen_address("--metrics", o.metrics, !o.token_file.empty());
  }
  if (!o.token_file.empty()) {
    TokenFile t = read_token_file(o.token_file, "--token-file");
    if (!t.warning.empty()) warnings->push_back(t.warning);
    server.token = t.token;
    if (!o.metrics.empty()) metrics.token = std::move(t.token);
  }
}

// --pid, --pidfile, --name, --port: which processes to sample.
struct TargetArgs {
  std::vector<std::string> pids, pidfiles, names, ports;
};

void add_target_options(CLI::App& app, TargetArgs& t) {
  app.add_option("--pid", t.pids,
                 "process id to sample (repeatable; not followed across restarts)");
  app.add_option("--pidfile", t.pidfiles, "file holding the pid (repeatable; re-read on restart)");
  app.add_option("--name", t.names, "process name or executable basename (repeatable)");
  app.add_option("--port", t.ports, "the process listening on this TCP port (repeatable)");
}

void apply_target_options(const TargetArgs& t, MonitorConfig& config) {
  using Kind = Selector::Kind;
  for (const auto& v : t.pids) config.selectors.push_back(make_selector(Kind::pid, v));
  for (const auto& v : t.pidfiles) config.selectors.push_back(make_selector(Kind::pidfile, v));
  for (const auto& v : t.names) config.selectors.push_back(make_selector(Kind::name, v));
  for (const auto& v : t.ports) config.selectors.push_back(make_selector(Kind::port, v));
}

// --interval and the cadences and limits that follow from it.
struct SamplingArgs {
  std::string interval = "1s", host_interval, flush_interval, pss_interval, pss_max_rss = "4GiB";
  std::vector<std::string> psi_triggers;
};

void add_sampling_options(CLI::App& app, SamplingArgs& s, MonitorConfig& config) {
  app.add_option("--interval", s.interval, "sampling interval, 10ms..1h (default 1s)")
      ->check(cli::parsed_between(parse_duration_us, kMinIntervalUs, kMaxIntervalUs,
                                  "from 10ms to 1h"));
  app.add_option("--max-queued", config.max_queued,
                 "ticks that may wait for a busy results file before samples are dropped "
                 "(default: 10 s worth)")
      ->check(cli::whole_number(0, 1'000'000));
  app.add_option("--host-interval", s.host_interval,
                 "read the host's files (load, memory, swap, CPU, PSI, disks) this often, "
                 "from the interval to 1h (default: the interval, but at least 1s)")
      ->check(cli::parsed_between(parse_duration_us, kMinIntervalUs, kMaxIntervalUs,
                                  "from 10ms to 1h"));
  app.add_option("--flush-interval", s.flush_interval,
                 "commit to the results file this often, from the interval to 1h (default: 5 "
                 "intervals, 1s..5s); a kill -9 loses at most this much")
      ->check(cli::parsed_between(parse_duration_us, kMinIntervalUs, kMaxIntervalUs,
                                  "from 10ms to 1h"));
  app.add_option("--pss-interval", s.pss_interval,
                 "also read PSS (smaps_rollup) this often, e.g. 30s; off by default: it is costly")
      ->check(cli::parsed_between(parse_duration_us, int64_t{0}, kMaxIntervalUs, "at most 1h"));
  app.add_option("--psi-trigger", s.psi_triggers,
                 "[cgroup:]RESOURCE:KIND:STALL/WINDOW, e.g. memory:some:150ms/2s: a PSI "
                 "trigger on /proc/pressure/RESOURCE, or with cgroup: on each target's cgroup "
                 "v2 RESOURCE.pressure (kvmon's one write; a window that is not a multiple of "
                 "2s needs CAP_SYS_RESOURCE), each firing an event (repeatable; off by "
                 "default: the pressure files are polled)");
  app.add_option("--pss-max-rss", s.pss_max_rss,
                 "skip PSS for processes with a larger RSS (default 4GiB)")
      ->check(cli::parsed_between(parse_size, uint64_t{0}, uint64_t{1} << 50, "at most 1PiB"));
}

void apply_sampling_options(const SamplingArgs& s, MonitorConfig& config) {
  config.interval_us = parse_duration_us(s.interval);
  auto at_least_interval = [&](const char* option, const std::string& text) {
    int64_t us = parse_duration_us(text);
    if (us < config.interval_us) {
      throw UsageError(std::string(option) + " '" + text +
                       "': must not be shorter than --interval (" + s.interval + ")");
    }
    return us;
  };
  if (!s.host_interval.empty()) {
    config.host_interval_us = at_least_interval("--host-interval", s.host_interval);
  }
  if (!s.flush_interval.empty()) {
    config.flush_interval_us = at_least_interval("--flush-interval", s.flush_interval);
  }
  if (!s.pss_interval.empty()) config.pss.interval_us = parse_duration_us(s.pss_interval);
  config.pss.max_rss_kib = static_cast<int64_t>(parse_size(s.pss_max_rss) / 1024);
  for (const std::string& t : s.psi_triggers) config.psi_triggers.push_back(parse_psi_trigger(t));
}

void add_listen_options(CLI::App& app, ListenOptions& lo, ServerConfig& server) {
  app.add_option("--listen", lo.listen,
                 "serve samples over TCP on ADDR:PORT (or PORT: 127.0.0.1); off by default")
      ->check(cli::non_empty());
  app.add_option("--metrics", lo.metrics,
                 "serve Prometheus metrics over HTTP at ADDR:PORT/metrics (or PORT: "
                 "127.0.0.1), e.g. 127.0.0.1:9273; off by default")
      ->check(cli::non_empty());
  app.add_option("--token-file", lo.token_file,
                 "clients (and scrapers, as Authorization: Bearer) must present the token on "
                 "this file's first line (required on a non-loopback address)")
      ->check(cli::non_empty());
  app.add_option("--max-clients", server.max_clients,
                 "clients served at once, 1..10000 (default 16)")
      ->check(cli::whole_number(1, 10'000));
  app.add_option("--client-queue", lo.client_queue,
                 "unsent bytes after which a client that does not read is dropped (default 4MiB)")
      ->check(
          cli::parsed_between(parse_size, uint64_t{1024}, uint64_t{1} << 40, "from 1KiB to 1TiB"));
  app.add_option("--idle-timeout", lo.idle_timeout,
                 "close clients that are not subscribed and send nothing this long (default 60s)")
      ->check(cli::parsed_between(parse_duration_us, int64_t{1'000'000}, int64_t{86'400'000'000},
                                  "from 1s to 24h"));
  app.add_option("--history", lo.history,
                 "keep this much of the past in memory for clients that reconnect to backfill, "
                 "0s..24h (default 1h, and at least 3600 ticks)")
      ->check(cli::parsed_between(parse_duration_us, int64_t{0}, int64_t{86'400'000'000},
                                  "from 0s to 24h"));
  app.add_option("--history-max", lo.history_max,
                 "but never more than this much memory for it, 64KiB..64GiB (default 64MiB)")
      ->check(cli::parsed_between(parse_size, uint64_t{64} << 10, uint64_t{64} << 30,
                                  "from 64KiB to 64GiB"));
}

}  // namespace

std::optional<Options> parse_options(int argc, const char* const* argv) {
  CLI::App app{"kvmon: samples key-value store processes and their host into a SQLite file"};
  Options opt;
  bool show_version = false;
  app.add_option("--db", opt.config.db_path, "results file (SQLite); created if missing")
      ->required()
      ->check(cli::non_empty());
  TargetArgs targets;
  add_target_options(app, targets);
  SamplingArgs sampling;
  add_sampling_options(app, sampling, opt.config);
  ListenOptions lo;
  add_listen_options(app, lo, opt.config.server);
  app.add_option("--log-level", opt.log_level, "debug, info, warn, error or off")
      ->check(cli::log_level());
  app.add_flag("--version", show_version, "print the version and exit");
  // What each takes, for --help (CLI11 says TEXT for every string option).
  const std::pair<const char*, const char*> types[] = {
      {"--db", "FILE"},
      {"--pid", "PID"},
      {"--pidfile", "FILE"},
      {"--name", "NAME"},
      {"--port", "PORT"},
      {"--interval", "DURATION"},
      {"--host-interval", "DURATION"},
      {"--flush-interval", "DURATION"},
      {"--pss-interval", "DURATION"},
      {"--pss-max-rss", "SIZE"},
      {"--listen", "[ADDR:]PORT"},
      {"--metrics", "[ADDR:]PORT"},
      {"--token-file", "FILE"},
      {"--client-queue", "SIZE"},
      {"--idle-timeout", "DURATION"},
      {"--history", "DURATION"},
      {"--history-max", "SIZE"},
      {"--psi-trigger", "[cgroup:]RES:KIND:STALL/WINDOW"},
      {"--log-level", "LEVEL"}};
  for (const auto& [name, type] : types) app.get_option(name)->type_name(type);
  // The option reference, from the definition above (docs/kvmon-options.md).
  if (argc == 2 && std::string_view(argv[1]) == "--options-reference") {
    std::cout << options_reference(app, "kvmon");
    return std::nullopt;
  }
  // The bash completion, from the definition above (packaging/kvmon.bash-completion).
  if (argc == 2 && std::string_view(argv[1]) == "--bash-completion") {
    std::cout << bash_completion(
        app, "kvmon",
        {{"--log-level", "debug info warn error off"},
         {"--pid", "$(ps -eo pid= 2>/dev/null)"},
         {"--name", "redis-server memcached valkey-server $(ps -eo comm= 2>/dev/null | sort -u)"},
         {"--listen", "127.0.0.1:7070 0.0.0.0:7070"},
         {"--metrics", "127.0.0.1:9273 0.0.0.0:9273"}});
    return std::nullopt;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    std::cout << app.help();
    return std::nullopt;
  } catch (const CLI::RequiredError& e) {
    if (show_version || (argc == 2 && std::string_view(argv[1]) == "--version")) {
      std::cout << "kvmon " << version() << "\n";
      return std::nullopt;
    }
    throw UsageError(e.what());
  } catch (const CLI::ParseError& e) {
    throw UsageError(e.what());
  }
  if (show_version) {
    std::cout << "kvmon " << version() << "\n";
    return std::nullopt;
  }
  check_results_path("--db", opt.config.db_path, false);
  apply_sampling_options(sampling, opt.config);
  apply_target_options(targets, opt.config);
  apply_listen_options(lo, opt.config.server, opt.config.metrics, &opt.warnings);
  opt.config.command_line = join_command_line(argc, argv);
  validate(opt.config);
  return opt;
}

}  // namespace kv::mon
