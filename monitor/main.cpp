// kvmon: parse the command line, run the monitor loop, report failures once.
#include <exception>
#include <iostream>
#include <stdexcept>

#include "kvbench/exit_codes.hpp"
#include "kvbench/log.hpp"
#include "kvbench/usage_error.hpp"
#include "monitor.hpp"
#include "options.hpp"

int main(int argc, char** argv) {
  kv::set_log_program("kvmon");
  std::optional<kv::mon::Options> options;
  try {
    options = kv::mon::parse_options(argc, argv);
    if (!options) return kv::kExitOk;  // --help or --version
    kv::set_log_level(kv::parse_log_level(options->log_level));
    for (const std::string& w : options->warnings) kv::log_warn() << w;
  } catch (const std::exception& e) {
    std::cerr << "kvmon: " << kv::one_printable_line(e.what()) << " (see kvmon --help)\n";
    return kv::kExitUsage;
  }
  try {
    return kv::mon::run_monitor(options->config);
  } catch (const std::exception& e) {
    std::cerr << "kvmon: " << kv::one_printable_line(e.what()) << "\n";
    return kv::kExitFailed;
  }
}
