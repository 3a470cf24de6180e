#include "options.hpp"

#include <CLI/CLI.hpp>
#include <cstdint>
#include <iostream>
#include <stdexcept>
#include <tuple>

#include "kvbench/log.hpp"
#include "kvbench/protocol.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/token_file.hpp"
#include "kvbench/units.hpp"
#include "kvbench/version.hpp"

namespace kv::mon {
namespace {

// CLI11 validators: CLI11 puts the option's name in front of their messages.
CLI::Validator non_empty() {
  return CLI::Validator(
      [](std::string& s) -> std::string { return s.empty() ? "must not be empty" : ""; }, "");
}

CLI::Validator whole_number(int64_t lo, int64_t hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        try {
          parse_whole_number("value", s, lo, hi);
          return "";
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "");
}

// A size or duration parsed by kvbench's parser, at least `min` (shown as `min_text`) and at
// most `max`.
template <typename Parse, typename T>
CLI::Validator parsed_between(Parse parse, T min, T max, const std::string& range_text) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        try {
          T v = parse(s);
          if (v < min || v > max) return "'" + s + "': must be " + range_text;
          return "";
        } catch (const std::invalid_argument& e) {
          return e.what();
        }
      },
      "");
}

// --listen and friends into `server`; throws std::invalid_argument with one clear line.
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
    throw std::invalid_argument(std::string("invalid ") + option + " '" + value +
                                "': " + hp.error().message);
  }
  std::string address = hp.value().host == "localhost" ? "127.0.0.1" : hp.value().host;
  if (!is_loopback_address(address) && !have_token) {
    throw std::invalid_argument(std::string(option) + " '" + value +
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
  if (server.max_clients < 1) throw std::invalid_argument("--max-clients must be at least 1");
  if (o.listen.empty()) {
    if (!o.token_file.empty() && o.metrics.empty()) {
      throw std::invalid_argument("--token-file needs --listen or --metrics");
    }
    if (!o.history.empty()) throw std::invalid_argument("--history needs --listen");
    if (!o.history_max.empty()) throw std::invalid_argument("--history-max needs --listen");
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

}  // namespace

std::optional<Options> parse_options(int argc, const char* const* argv) {
  CLI::App app{"kvmon: samples key-value store processes and their host into a SQLite file"};
  Options opt;
  std::vector<std::string> pids, pidfiles, names, ports;
  std::string interval = "1s";
  bool show_version = false;
  app.add_option("--db", opt.config.db_path, "results file (SQLite); created if missing")
      ->required()
      ->check(non_empty());
  app.add_option("--pid", pids, "process id to sample (repeatable; not followed across restarts)");
  app.add_option("--pidfile", pidfiles, "file holding the pid (repeatable; re-read on restart)");
  app.add_option("--name", names, "process name or executable basename (repeatable)");
  app.add_option("--port", ports, "the process listening on this TCP port (repeatable)");
  app.add_option("--interval", interval, "sampling interval, 10ms..1h (default 1s)")
      ->check(parsed_between(parse_duration_us, kMinIntervalUs, kMaxIntervalUs, "from 10ms to 1h"));
  app.add_option("--max-queued", opt.config.max_queued,
                 "ticks that may wait for a busy results file before samples are dropped "
                 "(default: 10 s worth)")
      ->check(whole_number(0, 1'000'000));
  std::string host_interval, flush_interval;
  app.add_option("--host-interval", host_interval,
                 "read the host's files (load, memory, swap, CPU, PSI, disks) this often, "
                 "from the interval to 1h (default: the interval, but at least 1s)")
      ->check(parsed_between(parse_duration_us, kMinIntervalUs, kMaxIntervalUs, "from 10ms to 1h"));
  app.add_option("--flush-interval", flush_interval,
                 "commit to the results file this often, from the interval to 1h (default: 5 "
                 "intervals, 1s..5s); a kill -9 loses at most this much")
      ->check(parsed_between(parse_duration_us, kMinIntervalUs, kMaxIntervalUs, "from 10ms to 1h"));
  std::string pss_interval, pss_max_rss = "4GiB";
  app.add_option("--pss-interval", pss_interval,
                 "also read PSS (smaps_rollup) this often, e.g. 30s; off by default: it is costly")
      ->check(parsed_between(parse_duration_us, int64_t{0}, kMaxIntervalUs, "at most 1h"));
  app.add_option("--pss-max-rss", pss_max_rss,
                 "skip PSS for processes with a larger RSS (default 4GiB)")
      ->check(parsed_between(parse_size, uint64_t{0}, uint64_t{1} << 50, "at most 1PiB"));
  ListenOptions lo;
  app.add_option("--listen", lo.listen,
                 "serve samples over TCP on ADDR:PORT (or PORT: 127.0.0.1); off by default")
      ->check(non_empty());
  app.add_option("--metrics", lo.metrics,
                 "serve Prometheus metrics over HTTP at ADDR:PORT/metrics (or PORT: "
                 "127.0.0.1), e.g. 127.0.0.1:9273; off by default")
      ->check(non_empty());
  app.add_option("--token-file", lo.token_file,
                 "clients (and scrapers, as Authorization: Bearer) must present the token on "
                 "this file's first line (required on a non-loopback address)")
      ->check(non_empty());
  app.add_option("--max-clients", opt.config.server.max_clients,
                 "clients served at once, 1..10000 (default 16)")
      ->check(whole_number(1, 10'000));
  app.add_option("--client-queue", lo.client_queue,
                 "unsent bytes after which a client that does not read is dropped (default 4MiB)")
      ->check(parsed_between(parse_size, uint64_t{1024}, uint64_t{1} << 40, "from 1KiB to 1TiB"));
  app.add_option("--idle-timeout", lo.idle_timeout,
                 "close clients that are not subscribed and send nothing this long (default 60s)")
      ->check(parsed_between(parse_duration_us, int64_t{1'000'000}, int64_t{86'400'000'000},
                             "from 1s to 24h"));
  app.add_option("--history", lo.history,
                 "keep this much of the past in memory for clients that reconnect to backfill, "
                 "0s..24h (default 1h, and at least 3600 ticks)")
      ->check(
          parsed_between(parse_duration_us, int64_t{0}, int64_t{86'400'000'000}, "from 0s to 24h"));
  app.add_option("--history-max", lo.history_max,
                 "but never more than this much memory for it, 64KiB..64GiB (default 64MiB)")
      ->check(parsed_between(parse_size, uint64_t{64} << 10, uint64_t{64} << 30,
                             "from 64KiB to 64GiB"));
  app.add_option("--log-level", opt.log_level, "debug, info, warn, error or off")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            try {
              parse_log_level(s);
              return "";
            } catch (const std::invalid_argument& e) {
              return e.what();
            }
          },
          ""));
  app.add_flag("--version", show_version, "print the version and exit");
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
    throw std::invalid_argument(e.what());
  } catch (const CLI::ParseError& e) {
    throw std::invalid_argument(e.what());
  }
  if (show_version) {
    std::cout << "kvmon " << version() << "\n";
    return std::nullopt;
  }
  check_results_path("--db", opt.config.db_path, false);
  opt.config.interval_us = parse_duration_us(interval);
  auto at_least_interval = [&](const char* option, const std::string& text) {
    int64_t us = parse_duration_us(text);
    if (us < opt.config.interval_us) {
      throw std::invalid_argument(std::string(option) + " '" + text +
                                  "': must not be shorter than --interval (" + interval + ")");
    }
    return us;
  };
  if (!host_interval.empty()) {
    opt.config.host_interval_us = at_least_interval("--host-interval", host_interval);
  }
  if (!flush_interval.empty()) {
    opt.config.flush_interval_us = at_least_interval("--flush-interval", flush_interval);
  }
  if (!pss_interval.empty()) opt.config.pss.interval_us = parse_duration_us(pss_interval);
  opt.config.pss.max_rss_kib = static_cast<int64_t>(parse_size(pss_max_rss) / 1024);
  using Kind = Selector::Kind;
  for (const auto& v : pids) opt.config.selectors.push_back(make_selector(Kind::pid, v));
  for (const auto& v : pidfiles) opt.config.selectors.push_back(make_selector(Kind::pidfile, v));
  for (const auto& v : names) opt.config.selectors.push_back(make_selector(Kind::name, v));
  for (const auto& v : ports) opt.config.selectors.push_back(make_selector(Kind::port, v));
  apply_listen_options(lo, opt.config.server, opt.config.metrics, &opt.warnings);
  opt.config.command_line = join_command_line(argc, argv);
  validate(opt.config);
  return opt;
}

}  // namespace kv::mon
