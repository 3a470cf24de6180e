#include "options.hpp"

#include <CLI/CLI.hpp>
#include <iostream>
#include <stdexcept>

#include "kvbench/units.hpp"
#include "kvbench/version.hpp"

namespace kv::mon {

std::optional<Options> parse_options(int argc, const char* const* argv) {
  CLI::App app{"kvmon: samples key-value store processes and their host into a SQLite file"};
  Options opt;
  std::vector<std::string> pids, pidfiles, names, ports;
  std::string interval = "1s";
  bool show_version = false;
  app.add_option("--db", opt.config.db_path, "results file (SQLite); created if missing")
      ->required();
  app.add_option("--pid", pids, "process id to sample (repeatable; not followed across restarts)");
  app.add_option("--pidfile", pidfiles, "file holding the pid (repeatable; re-read on restart)");
  app.add_option("--name", names, "process name or executable basename (repeatable)");
  app.add_option("--port", ports, "the process listening on this TCP port (repeatable)");
  app.add_option("--interval", interval, "sampling interval, 10ms..1h (default 1s)");
  app.add_option("--max-queued", opt.config.max_queued,
                 "ticks that may wait for a busy results file before samples are dropped "
                 "(default: 10 s worth)");
  std::string pss_interval, pss_max_rss = "4GiB";
  app.add_option("--pss-interval", pss_interval,
                 "also read PSS (smaps_rollup) this often, e.g. 30s; off by default: it is costly");
  app.add_option("--pss-max-rss", pss_max_rss,
                 "skip PSS for processes with a larger RSS (default 4GiB)");
  app.add_option("--log-level", opt.log_level, "debug, info, warn, error or off");
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
  opt.config.interval_us = parse_duration_us(interval);
  if (!pss_interval.empty()) opt.config.pss.interval_us = parse_duration_us(pss_interval);
  opt.config.pss.max_rss_kib = static_cast<int64_t>(parse_size(pss_max_rss) / 1024);
  using Kind = Selector::Kind;
  for (const auto& v : pids) opt.config.selectors.push_back(make_selector(Kind::pid, v));
  for (const auto& v : pidfiles) opt.config.selectors.push_back(make_selector(Kind::pidfile, v));
  for (const auto& v : names) opt.config.selectors.push_back(make_selector(Kind::name, v));
  for (const auto& v : ports) opt.config.selectors.push_back(make_selector(Kind::port, v));
  opt.config.command_line = join_command_line(argc, argv);
  validate(opt.config);
  return opt;
}

}  // namespace kv::mon
