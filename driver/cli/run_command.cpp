#include "cli/run_command.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "cli/memtier_flags.hpp"
#include "cli/output_file.hpp"
#include "cli/run_checks.hpp"
#include "cli/run_output.hpp"
#include "kvbench/cli_validators.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/exit_codes.hpp"
#include "kvbench/log.hpp"
#include "kvbench/schema.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "kvbench/version.hpp"
#include "run/process_group.hpp"
#include "run/run_watcher.hpp"
#include "search/search_group.hpp"
#include "store/target_uri.hpp"
#include "util/text_file.hpp"
#include "view/percentiles.hpp"
#include "workload/scenario.hpp"
#include "workload/workload_options.hpp"

namespace kv::drive {
namespace {

std::atomic<bool> g_stop{false};  // set by SIGINT/SIGTERM (and the group's stop signal)

void on_signal(int) {
  if (g_stop.exchange(true)) leave_now_on_signal();  // a second Ctrl-C: leave now, marked
}

void on_group_stop(int) { g_stop.store(true); }  // the group's parent: stop, never leave now

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sa.sa_handler = on_group_stop;
  sigaction(kGroupStopSignal, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

// The command line as stored in the results file: passwords in redis:// URIs become ***.
std::string redacted_command_line(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (i > 0 && (std::string_view(argv[i - 1]) == "-a" ||
                  std::string_view(argv[i - 1]) == "--authenticate")) {
      args.emplace_back("***");  // memtier's -a PASSWORD
    } else if (arg.rfind("--authenticate=", 0) == 0) {
      args.emplace_back("--authenticate=***");
    } else if (arg.size() > 2 && arg.rfind("-a", 0) == 0 && arg[2] != '-') {
      args.emplace_back("-a***");
    } else {
      args.push_back(redact_uri_passwords(argv[i]));
    }
  }
  std::vector<const char*> ptrs;
  for (const auto& a : args) ptrs.push_back(a.c_str());
  return join_command_line(argc, ptrs.data());
}

}  // namespace

double parse_scale(std::string_view text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !(v > 0) || v > 1000)
    throw UsageError("invalid scale '" + std::string(text) +
                     "': expected a number above 0 and at most 1000");
  return v;
}

bool RunCommand::parsed() const { return sub_->parsed(); }

void RunCommand::check(int argc, char** argv) {
  if (memtier_.names_a_target()) opts_.targets.push_back(memtier_.target());
  if (opts_.targets.empty()) throw UsageError("--target is required");
  resolve_passwords(argc, argv);
  std::vector<std::pair<std::string, std::string>> overrides;
  for (const auto& [o, cli] : workload_cli_) {
    if (cli->count() == 0) continue;
    overrides.emplace_back(
        o->name, o->flag ? (workload_flags_[o->name] ? "true" : "false") : workload_text_[o->name]);
  }
  const bool phases_given = std::any_of(overrides.begin(), overrides.end(),
                                        [](const auto& o) { return o.first == "phases"; }) ||
                            !scenario_.empty();
  std::vector<std::string> memtier_notes;  // said once the whole command line is known good
  apply_memtier(phases_given, overrides, memtier_notes);
  Scenario sc = scenario_.empty() ? Scenario{"", "", {}, {{"", {}}}} : load_scenario(scenario_);
  const double scale = scale_text_.empty() ? 1.0 : parse_scale(scale_text_);
  if (scenario_.empty() && !scale_text_.empty())
    throw UsageError("--scale applies to a --scenario");
  // A --search step is --warmup plus --duration (its measured time).
  opts_.steps = expand_scenario(sc, WorkloadSpec{}, overrides, scale, search_cli_.search);
  apply_commands(commands_.parse(*sub_),
                 std::any_of(overrides.begin(), overrides.end(),
                             [](const auto& o) { return o.first == "phases"; }),
                 !scenario_.empty(), opts_.steps);
  // --ratio shapes mixed phases only: without one it would be ignored, silently. (A search's
  // default phases are load,mixed.)
  const auto has_mixed = [](const RunStep& st) {
    return std::find(st.workload.phases.begin(), st.workload.phases.end(), PhaseKind::mixed) !=
           st.workload.phases.end();
  };
  if (scenario_.empty() && !search_cli_.search &&
      std::any_of(overrides.begin(), overrides.end(),
                  [](const auto& o) { return o.first == "ratio"; }) &&
      std::none_of(opts_.steps.begin(), opts_.steps.end(), has_mixed))
    throw UsageError(
        "--ratio shapes mixed phases, and this run has none: add one (--phases load,mixed)");
  if (!max_errors_.empty()) opts_.max_errors = parse_count(max_errors_);
  opts_.give_up_us = parse_duration_us(give_up_);
  parse_process_place();
  const bool warmup_given = std::any_of(overrides.begin(), overrides.end(),
                                        [](const auto& o) { return o.first == "warmup"; });
  if (search_cli_.search && !opts_.steps.empty() && opts_.steps.front().workload.trace.on())
    throw UsageError("--search with --trace: a replay's rate is its trace's (--speed scales it)");
  opts_.search = finish_search_options(search_cli_, opts_.steps, phases_given, warmup_given);
  if (opts_.search.enabled && opts_.process_count > 1 && opts_.targets.size() > 1)
    throw UsageError("--search with --processes takes one --target (the group steps one store)");
  parse_group_pipes();
  for (auto& step : opts_.steps) {
    if (step.workload.trace.on()) scan_replay(step.workload);
    step.workload.process_index = opts_.process_index;
    step.workload.process_count = opts_.process_count;
    check_bytes_in_flight(step.workload, opts_.process_count);
  }
  if (!segment_.empty()) apply_segment(segment_);
  if (!group_.empty()) {
    if (opts_.process_count > 1)
      throw UsageError("--group is not available with --processes (it names its own)");
    opts_.run_group = group_;
  }
  if (!start_at_.empty()) opts_.start_at_ts_us = parse_start_at(start_at_, now_ts_us());
  opts_.scenario = scenario_;
  opts_.scale = scale;
  parse_timeout();
  opts_.command_line = redacted_command_line(argc, argv);
  if (!percentiles_.empty()) outputs_.percentiles = parse_percentiles(percentiles_);
  check_json_out();
  opts_.progress = !opts_.json;
  const std::vector<TargetSpec> specs = check_run_options(opts_);
  resolve_io(opts_.steps);
  // Nor --hdr-log (one from a --config file too): the parent writes the group's logs
  // (write_group_hdr_logs); a process's own would make the parent's creation fail.
  if (!process_index_.empty()) opts_.hdr_log_prefix.clear();
  check_hdr_logs(specs.size());
  check_memcached_ttl(specs, opts_.steps);
  check_mix_commands(specs, opts_.steps);
  check_wire_start(specs, opts_.steps);
  check_descriptors(specs, opts_.steps);
  check_repeat();
  for (const auto& n : memtier_notes) log_info() << n;
  for (const auto& n : password_notes_) log_warn() << n;
}

// A group's process (--process-index) writes only its rows: --json-out, from the command line or
// a --config file the processes read too, is the parent's (the group's document).
void RunCommand::check_json_out() {
  if (json_out_.empty() || !process_index_.empty()) return;
  check_output_path("--json-out", json_out_);
  check_not_results_file("--json-out", json_out_, opts_.db_path);
  check_replaceable("--json-out", json_out_, OutputKind::json, outputs_.force);
  outputs_.json_out = json_out_;
}

void RunCommand::check_repeat() {
  if (!repeat_.empty())
    opts_.rounds = static_cast<int>(parse_whole_number("--repeat", repeat_, 1, 1000));
  if (opts_.rounds <= 1) return;
  const std::pair<bool, const char*> partners[] = {
      {opts_.process_count > 1 || !process_index_.empty(),
       "--processes: a group's processes run once; run the command N times for N groups"},
      {!segment_.empty() || !group_.empty(),
       "--segment or --group: the hosts of a multi-host run start together once; run the "
       "command N times on each"},
      {!start_at_.empty(), "--start-at: it names one start, and each round starts after the last"},
      {!opts_.hdr_log_prefix.empty(), "--hdr-log: its files are one run's"},
  };
  for (const auto& [given, why] : partners)
    if (given) throw UsageError(std::string("--repeat with ") + why);
}

// memtier_benchmark's flags: their workload overrides, and their outputs (one of each kind).
void RunCommand::apply_memtier(bool phases_given,
                               std::vector<std::pair<std::string, std::string>>& overrides,
                               std::vector<std::string>& notes) {
  memtier_.apply(memtier_.memtier_mode(phases_given, !scenario_.empty()), !scenario_.empty(),
                 overrides, notes);
  if (!memtier_.percentiles().empty()) {
    if (!percentiles_.empty()) throw UsageError("--print-percentiles and --percentiles: give one");
    percentiles_ = memtier_.percentiles();
  }
  if (!memtier_.json_out().empty()) {
    if (!json_out_.empty()) throw UsageError("--json-out-file and --json-out: give one");
    json_out_ = memtier_.json_out();
  }
}

// --processes N and, in a group's process, its --process-index.
void RunCommand::parse_process_place() {
  if (!processes_.empty())
    opts_.process_count = static_cast<int>(parse_whole_number("--processes", processes_, 1, 256));
  if (!process_index_.empty())
    opts_.process_index =
        static_cast<int>(parse_whole_number("--process-index", process_index_, 0, 255));
  if (opts_.process_index < 0 || opts_.process_index >= opts_.process_count)
    throw UsageError("--process-index must be below --processes");
}

// The pipes a --processes parent gives each process (--search-follow or --phase-barrier).
void RunCommand::parse_group_pipes() {
  if (!search_follow_.empty()) {  // set by the parent of a --processes group only
    int in = -1, out = -1;
    if (std::sscanf(search_follow_.c_str(), "%d,%d", &in, &out) != 2 || in < 0 || out < 0 ||
        process_index_.empty() || !opts_.search.enabled)
      throw UsageError("--search-follow is for the processes of a --search --processes group");
    opts_.search_follow_in = in;
    opts_.search_follow_out = out;
  }
  if (!phase_barrier_.empty()) {  // set by the parent of a --processes group only
    int in = -1, out = -1;
    if (std::sscanf(phase_barrier_.c_str(), "%d,%d", &in, &out) != 2 || in < 0 || out < 0 ||
        process_index_.empty() || opts_.search.enabled)
      throw UsageError("--phase-barrier is for the processes of a --processes group");
    opts_.phase_barrier_in = in;
    opts_.phase_barrier_out = out;
  }
}

void RunCommand::parse_timeout() {
  opts_.client.timeout_us = parse_duration_us(timeout_);
  if (opts_.client.timeout_us < 1000)
    throw UsageError("invalid --timeout '" + timeout_ + "': must be at least 1ms");
  // A day is already far beyond any request worth waiting for (and --timeout once went to
  // libmemcached, which keeps it as an int32 of milliseconds, 24.8 days).
  if (opts_.client.timeout_us > 86'400'000'000)
    throw UsageError("invalid --timeout '" + timeout_ + "': at most 24h");
}

// --hdr-log: each of the `targets` logs must be a new file kvdrive may write.
void RunCommand::check_hdr_logs(size_t targets) const {
  if (opts_.hdr_log_prefix.empty()) return;
  for (size_t i = 0; i < targets; ++i) {
    const std::string path = hdr_log_path(opts_.hdr_log_prefix, static_cast<int>(i));
    check_output_path("--hdr-log", path);
    check_not_results_file("--hdr-log", path, opts_.db_path);
    std::error_code ec;
    const bool exists = std::filesystem::exists(path, ec);
    if (ec) throw UsageError("--hdr-log: cannot check '" + path + "': " + ec.message());
    if (exists)
      throw UsageError("--hdr-log: '" + path + "' exists: remove it or choose another PREFIX");
  }
}

void RunCommand::resolve_passwords(int argc, char** argv) {
  bool in_argv = memtier_.has_password();
  for (int i = 1; i < argc && !in_argv; ++i)
    in_argv = redact_uri_passwords(argv[i]) != std::string_view(argv[i]);
  if (in_argv && process_index_.empty())
    password_notes_.emplace_back(
        "a password on the command line is visible to every user of this host (ps, /proc): "
        "give it with --password-file FILE or REDISCLI_AUTH instead");
  std::optional<std::string> from_file;
  if (!password_file_.empty()) {
    const std::string text = read_text_file("--password-file", password_file_, 64 << 10);
    const std::string line(trim(std::string_view(text).substr(0, text.find('\n'))));
    if (line.empty())
      throw UsageError("--password-file '" + password_file_ + "': its first line is empty");
    struct stat st {};
    if (::stat(password_file_.c_str(), &st) == 0 && (st.st_mode & 0044) != 0)
      password_notes_.push_back("--password-file '" + password_file_ + "' is readable by " +
                                ((st.st_mode & 0004) != 0 ? "anyone" : "its group") +
                                ": chmod 600 it");
    from_file = line;
  }
  const char* env = std::getenv("REDISCLI_AUTH");
  for (size_t i = 0; i < opts_.targets.size(); ++i) {
    const std::string handed = target_password_env(i);  // from a --processes parent
    const char* parent = std::getenv(handed.c_str());
    const std::string source = parent != nullptr ? "the parent process's"
                               : from_file       ? "--password-file '" + password_file_ + "':"
                                                 : "REDISCLI_AUTH:";
    std::string password = parent != nullptr ? parent
                           : from_file       ? *from_file
                           : env != nullptr  ? env
                                             : "";
    ::unsetenv(handed.c_str());
    if (password.empty()) continue;
    const TargetSpec spec = parse_target_uri(opts_.targets[i]);
    if (spec.protocol != Protocol::redis || !spec.password.empty()) continue;
    if (password.find('?') != std::string::npos)
      throw UsageError(source + " a password with '?' goes in a --target URI only");
    opts_.targets[i] = with_uri_password(opts_.targets[i], password);
  }
}

void RunCommand::apply_segment(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UsageError("invalid --segment '" + text + "': " + why);
  };
  const auto slash = text.find('/');
  if (slash == std::string::npos) throw bad("expected I/N, e.g. 2/3");
  int64_t i = 0, n = 0;
  try {
    n = parse_whole_number("--segment", text.substr(slash + 1), 1, 4096);
    i = parse_whole_number("--segment", text.substr(0, slash), 1, 4096);
  } catch (const UsageError&) {
    throw bad("I and N are whole numbers, 1 <= I <= N <= 4096");
  }
  if (i > n) throw bad("I must be between 1 and N");
  if (opts_.process_count > 1) throw bad("not with --processes");
  if (opts_.search.enabled) throw bad("not with --search");
  opts_.segment_index = static_cast<int>(i);
  opts_.segment_count = static_cast<int>(n);
  if (n == 1) return;
  for (auto& step : opts_.steps) {
    WorkloadSpec& w = step.workload;
    if (w.threads < n)
      throw bad("each segment runs at least one thread: --threads " + std::to_string(w.threads) +
                " < " + std::to_string(n) + " segments");
    // Segment i (0-based) takes the run's workers [T*i/N, T*(i+1)/N).
    const int64_t total = w.threads;
    const int64_t first = total * (i - 1) / n, end = total * i / n;
    w.worker_first = static_cast<int>(first);
    w.worker_total = static_cast<int>(total);
    w.threads = static_cast<int>(end - first);
  }
}

int RunCommand::execute(int argc, char** argv) {
  install_signal_handlers();
  if (opts_.process_count > 1 && opts_.run_group.empty()) {
    opts_.run_group =
        (opts_.name.empty() ? "group" : opts_.name) + "-" + std::to_string(now_ts_us());
    GroupRecord group = run_process_group(opts_, argc, argv, g_stop);
    return print_group_record(group, opts_, std::cout, outputs_);
  }
  opts_.quiet = opts_.quiet || !opts_.run_group.empty();
  opts_.progress = opts_.progress && opts_.run_group.empty();
  if (opts_.rounds > 1) return run_rounds();
  RunRecord rec = run_benchmark(opts_, g_stop);
  return print_run_record(rec, opts_, std::cout, outputs_);
}

// --repeat N: N runs, one per round, until one does not complete (it ends the rounds: a store
// that failed or a Ctrl-C would fail or cut short the next ones too).
int RunCommand::run_rounds() {
  opts_.repeat_group =
      (opts_.name.empty() ? "repeat" : opts_.name) + "-" + std::to_string(now_ts_us());
  std::vector<int64_t> ids;
  std::optional<RunRecord> last;
  int code = kExitOk;
  for (int r = 1; r <= opts_.rounds && code == kExitOk; ++r) {
    opts_.round = r;
    log_info() << "round " << r << " of " << opts_.rounds << " (repeat group " << opts_.repeat_group
               << ")";
    last.emplace(run_benchmark(opts_, g_stop));
    ids.push_back(last->run_id);
    code = print_round_record(*last, opts_, std::cout, outputs_);
    if (last->status != RunStatus::completed && r < opts_.rounds)
      log_warn() << "round " << r << " did not complete: rounds " << r + 1 << " to " << opts_.rounds
                 << " were not run";
  }
  return print_rounds_record(last->db, ids, code, opts_, std::cout, outputs_);
}

}  // namespace kv::drive
