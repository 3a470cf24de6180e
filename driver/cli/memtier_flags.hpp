// memtier_benchmark's command line, run as memtier would run it: its flags, and — when the
// store is named its way (-s/-p/-P) without --phases or --scenario — its defaults and meanings
// (one mixed phase at --ratio, keys R:R over --key-minimum..--key-maximum, -n requests per
// connection, 50 connections a thread, 32-byte values, "memtier-" keys). A memtier flag whose
// meaning kvdrive does not have is refused in one line naming kvdrive's nearest spelling.
// docs/memtier.md maps every flag. CLI11 stays in the .cpp.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace CLI {
class App;
}  // namespace CLI

namespace kv::drive {

class MemtierFlags {
 public:
  // Adds memtier's flags to `run` (a group of their own), bound to this object.
  void add_to(CLI::App& run);

  // Whether any of -s/-p/-P/-a named a store; then target() is its URI.
  bool names_a_target() const;
  // -s HOST -p PORT -P PROTOCOL -a PASSWORD (--select-db N, --cluster-mode) as one target URI.
  // Throws UsageError.
  std::string target() const;
  // memtier's meanings: the store named by -s/-p/-P with neither --phases nor a scenario.
  bool memtier_mode(bool phases_given, bool scenario_given) const;

  // Turns memtier's flags into kvdrive's workload options (name, value), added to or replacing
  // `overrides` (what the command line gave of kvdrive's own); with memtier_mode, memtier's
  // defaults for what neither gave. Throws UsageError for a flag kvdrive has no meaning for.
  // `notes` gets one line per conversion worth saying (e.g. "-n 100 per connection x 4 threads
  // x 50 connections = 20000 requests").
  void apply(bool memtier_mode, bool scenario_given,
             std::vector<std::pair<std::string, std::string>>& overrides,
             std::vector<std::string>& notes) const;

  // --print-percentiles and --json-out-file, for kvdrive's --percentiles and --json-out (empty:
  // not given).
  const std::string& percentiles() const { return print_percentiles_; }
  const std::string& json_out() const { return json_out_file_; }
  bool has_password() const { return !authenticate_.empty(); }  // -a on the command line

 private:
  std::string server_, port_, protocol_, authenticate_, select_db_;
  std::string requests_, key_minimum_, key_maximum_, data_size_range_, rate_limiting_;
  std::string print_percentiles_, json_out_file_, run_count_, expiry_range_, unix_socket_;
  std::string data_size_list_;
  bool cluster_mode_ = false, hide_histogram_ = false, distinct_client_seed_ = false,
       randomize_ = false, random_data_ = false;
};

}  // namespace kv::drive
