#include "cli/gen_trace_command.hpp"

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <iostream>

#include "kvbench/exit_codes.hpp"
#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "workload/workload.hpp"

namespace kv::drive {
namespace {

double fraction(const std::string& name, const std::string& text) {
  double v = -1;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size() || !(v >= 0 && v <= 1))
    throw UsageError("invalid " + name + " '" + text + "': a fraction from 0 to 1");
  return v;
}

// `parse` of `text`, its error naming `name`.
template <typename F>
auto named(const std::string& name, const std::string& text, F parse) {
  try {
    return parse(text);
  } catch (const UsageError& e) {
    throw UsageError(name + " '" + text + "': " + e.what());
  }
}

}  // namespace

GenTraceCommand::GenTraceCommand(CLI::App& app)
    : sub_(app.add_subcommand("gen-trace",
                              "Write a synthetic cache trace (the format run --trace and mrc "
                              "read) to standard output")) {
  const auto add = [&](const char* name, std::string& into, const char* type, const char* help) {
    sub_->add_option(name, into, help)->type_name(type)->capture_default_str();
  };
  add("--requests", requests_, "N", "Requests in the trace");
  add("--keys", keys_, "N", "Distinct keys");
  add("--zipf", zipf_, "A", "Popularity: zipf with this exponent (0: uniform)");
  add("--writes", writes_, "F", "Share of the requests that are sets");
  add("--deletes", deletes_, "F", "Share of the requests that are deletes (the rest: gets)");
  add("--value-size", value_size_, "SIZE",
      "Each key's value size: fixed (100) or a range drawn log-uniform, a long tail (50-10K)");
  add("--rate", rate_, "N", "Requests a second of trace time");
  add("--ttl", ttl_, "DURATION", "The TTL of every write (0: none)");
  add("--seed", seed_, "N", "The same seed, the same trace");
  sub_->add_flag("--cache-aside", cache_aside_,
                 "A get of a key that is not there is followed by a set of it (a look-aside "
                 "client, as production traces hold them)");
}

bool GenTraceCommand::parsed() const { return sub_->parsed(); }

void GenTraceCommand::check() {
  const auto count = [](const std::string& t) { return parse_count(t); };
  spec_.requests = named("--requests", requests_, count);
  if (spec_.requests == 0 || spec_.requests > 1'000'000'000'000)
    throw UsageError("invalid --requests '" + requests_ + "': 1 to 10^12");
  spec_.keys = named("--keys", keys_, count);
  if (spec_.keys == 0 || spec_.keys > uint64_t{1} << 32)
    throw UsageError("invalid --keys '" + keys_ + "': 1 to 2^32");
  char* end = nullptr;
  spec_.zipf = std::strtod(zipf_.c_str(), &end);
  if (end == zipf_.c_str() || *end != '\0' || !(spec_.zipf >= 0 && spec_.zipf <= 10))
    throw UsageError("invalid --zipf '" + zipf_ + "': an exponent from 0 to 10");
  spec_.write_fraction = fraction("--writes", writes_);
  spec_.delete_fraction = fraction("--deletes", deletes_);
  if (spec_.write_fraction + spec_.delete_fraction > 1)
    throw UsageError("--writes and --deletes add up to more than 1");
  const ValueSizes sizes =
      named("--value-size", value_size_, [](const std::string& t) { return parse_value_sizes(t); });
  if (!sizes.weighted.empty())
    throw UsageError("invalid --value-size '" + value_size_ + "': fixed or a range");
  if (sizes.max > kTraceMaxValue)
    throw UsageError("invalid --value-size '" + value_size_ + "': at most " +
                     std::to_string(kTraceMaxValue) + " bytes");
  spec_.value_min = static_cast<uint32_t>(sizes.min);
  spec_.value_max = static_cast<uint32_t>(sizes.max);
  spec_.rate = static_cast<uint32_t>(parse_whole_number("--rate", rate_, 1, 100'000'000));
  const int64_t ttl_us =
      named("--ttl", ttl_, [](const std::string& t) { return parse_duration_us(t); });
  if (ttl_us % 1'000'000 != 0) throw UsageError("invalid --ttl '" + ttl_ + "': whole seconds");
  spec_.ttl_s = ttl_us / 1'000'000;
  spec_.seed = static_cast<uint64_t>(parse_whole_number("--seed", seed_, 0, INT64_MAX));
  spec_.cache_aside = cache_aside_;
}

int GenTraceCommand::execute() {
  write_trace(spec_, std::cout);
  std::cout.flush();
  return std::cout ? kExitOk : kExitFailed;
}

}  // namespace kv::drive
