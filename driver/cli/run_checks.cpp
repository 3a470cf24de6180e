// The checks of `kvdrive run` that need no store (cli/run_checks.hpp).
#include "cli/run_checks.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>

#include "kvbench/units.hpp"
#include "kvbench/usage_error.hpp"
#include "workload/command_template.hpp"
#include "workload/trace.hpp"

namespace kv::drive {

// Every connection may hold --pipeline values of the largest size in its buffers at once: more
// than the machine's memory can only end in the OOM killer (64M x --pipeline 4096 is 256 GiB
// per connection), so it is refused before anything starts.
void check_bytes_in_flight(const WorkloadSpec& w, int processes) {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;
  const double memory = static_cast<double>(pages) * static_cast<double>(page);
  const double in_flight =
      static_cast<double>(w.largest_value()) * w.pipeline * w.connections * w.threads * processes;
  if (in_flight > memory)
    throw UsageError(
        "--value-size " + format_size(w.largest_value()) + " x --pipeline " +
        std::to_string(w.pipeline) + " x --connections " + std::to_string(w.connections) +
        " x --threads " + std::to_string(w.threads) +
        (processes > 1 ? " x --processes " + std::to_string(processes) : std::string()) + " = " +
        format_size(static_cast<uint64_t>(in_flight)) +
        " in flight, more than this machine's memory (" +
        format_size(static_cast<uint64_t>(memory)) + ")");
}

void scan_replay(WorkloadSpec& w) {
  TraceScan scan;
  try {
    scan = scan_trace(w.trace.path, w.trace.keys_scale);
  } catch (const TraceError& e) {
    throw UsageError(std::string("--trace ") + e.what());
  }
  if (scan.requests == 0)
    throw UsageError("--trace " + w.trace.path + ": no request to replay" +
                     (scan.records > 0 ? " (--trace-keys-scale left out every key)" : ""));
  w.trace.requests = scan.requests;
  w.trace.span_s = scan.last_ts - scan.first_ts + 1;
  w.trace.ops = scan.ops;
  w.trace.largest_ttl = scan.largest_ttl;
  w.trace.counters = std::make_shared<const std::unordered_set<uint64_t>>(std::move(scan.counters));
}

// memcached reads an expiry above 30 days as a Unix time, which would be long past: every value
// would expire at once while the run looks fine.
void check_memcached_ttl(const std::vector<TargetSpec>& specs, const std::vector<RunStep>& steps) {
  constexpr uint32_t kMemcachedMaxRelativeTtlS = 30 * 86'400;
  for (const auto& spec : specs) {
    if (spec.protocol != Protocol::memcached) continue;
    for (const auto& step : steps) {
      if (step.workload.trace.largest_ttl > kMemcachedMaxRelativeTtlS)
        throw UsageError("--trace " + step.workload.trace.path + ": a TTL of " +
                         std::to_string(step.workload.trace.largest_ttl) + " s: " + spec.display +
                         " reads an expiry above 30 days as a Unix time (long past)");
      if (step.workload.ttl.largest() > kMemcachedMaxRelativeTtlS)
        throw UsageError("--ttl " +
                         format_duration_us(int64_t{step.workload.ttl.largest()} * 1'000'000) +
                         ": " + spec.display +
                         " reads an expiry above 30 days as a Unix time (long past); at most "
                         "720h for memcached targets");
    }
  }
}

// Redis has no command for memcached's prepend, gets and cas.
void check_mix_commands(const std::vector<TargetSpec>& specs, const std::vector<RunStep>& steps) {
  for (const auto& spec : specs) {
    if (spec.protocol != Protocol::redis) {
      for (const auto& step : steps)
        if (step.workload.has_mixed_phase() &&
            step.workload.phase_sends(PhaseKind::mixed, OpType::mset))
          throw UsageError("--mix mset: " + spec.display +
                           " is a memcached target, and memcached has no multi-key set (Redis "
                           "only)");
      for (const auto& step : steps)
        if (!step.workload.commands.empty())
          throw UsageError("--command '" + step.workload.commands.front().text +
                           "': sends Redis commands, and " + spec.display +
                           " is a memcached target");
      continue;
    }
    if (spec.cluster)
      for (const auto& step : steps) {
        if (step.workload.multi_key_get > 0)
          throw UsageError("--multi-key-get: " + spec.display +
                           " is a Cluster, where an MGET's keys must share a hash slot and "
                           "kvdrive's keys carry no hash tag; --command 'MGET {__key__}a "
                           "{__key__}b' sends keys of one slot");
        for (const CommandTemplate& c : step.workload.commands)
          if (!routes_by_key(c))
            throw UsageError("--command '" + c.text + "': " + spec.display +
                             " is a Cluster, where a command goes to its key's node: each "
                             "argument with __key__ must be __key__ alone or hold it as a hash "
                             "tag ('list:{__key__}')");
      }
    for (const auto& step : steps)
      for (OpType op : {OpType::prepend, OpType::gets, OpType::cas})
        if (step.workload.has_mixed_phase() && step.workload.phase_sends(PhaseKind::mixed, op))
          throw UsageError(std::string("--mix ") + op_name(op) + ": " + spec.display +
                           " is a Redis target, and Redis has no " + op_name(op) +
                           " (memcached only)");
  }
}

// The file descriptors a run needs: one socket per connection per server per thread, and some
// for the results file, the stats pollers, kvmon links and each thread's event loop. The soft
// limit (ulimit -n) is raised to what is needed, up to the hard limit; above it the run is
// refused before anything is written (a run that ran out of descriptors connecting was
// recorded as failed).
void check_descriptors(const std::vector<TargetSpec>& specs, const std::vector<RunStep>& steps) {
  size_t servers = 1;
  for (const auto& spec : specs) servers = std::max(servers, spec.servers.size());
  uint64_t need = 0;
  const WorkloadSpec* widest = nullptr;
  for (const auto& step : steps) {
    const auto& w = step.workload;
    const uint64_t n =
        static_cast<uint64_t>(w.threads) * static_cast<uint64_t>(w.connections) * servers + 64 +
        4 * static_cast<uint64_t>(w.threads);
    if (n > need) {
      need = n;
      widest = &w;
    }
  }
  rlimit lim{};
  if (widest == nullptr || ::getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur >= need) return;
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < need)
    throw UsageError("--threads " + std::to_string(widest->threads) + " x --connections " +
                     std::to_string(widest->connections) +
                     (servers > 1 ? " x " + std::to_string(servers) + " servers" : std::string()) +
                     " needs about " + std::to_string(need) +
                     " file descriptors; this process may open at most " +
                     std::to_string(lim.rlim_max) +
                     " (ulimit -Hn): raise the limit or use fewer connections");
  const rlim_t soft = lim.rlim_cur;
  lim.rlim_cur = need;
  if (::setrlimit(RLIMIT_NOFILE, &lim) != 0)
    throw UsageError("needs about " + std::to_string(need) +
                     " file descriptors and cannot raise ulimit -n from " + std::to_string(soft) +
                     ": " + std::strerror(errno));
}

// TLS hides the segments from the kernel's stamps: no wire part can start at one.
void check_wire_start(const std::vector<TargetSpec>& specs, const std::vector<RunStep>& steps) {
  for (const auto& step : steps) {
    if (!step.workload.wire_start_kernel) continue;
    for (const auto& spec : specs)
      if (spec.tls.enabled)
        throw UsageError("--wire-start kernel: " + spec.display +
                         " is TLS, whose requests the kernel does not stamp (plain TCP only)");
  }
}

// --start-at's value as wall time (µs since the epoch); throws UsageError.
int64_t parse_start_at(const std::string& text, int64_t now_us) {
  const auto bad = [&](const std::string& why) {
    return UsageError("invalid --start-at '" + text + "': " + why);
  };
  int64_t ts = 0;
  if (text.front() == '+') {
    try {
      ts = now_us + parse_duration_us(text.substr(1));
    } catch (const UsageError&) {
      throw bad("+DURATION, e.g. +10s");
    }
  } else if (text.front() == '@') {
    double s = 0;
    const char* end = text.data() + text.size();
    auto [p, ec] = std::from_chars(text.data() + 1, end, s);
    if (ec != std::errc() || p != end || !(s > 0) || s > 4e9) throw bad("@EPOCH-SECONDS");
    ts = static_cast<int64_t>(s * 1e6);
  } else {
    tm t{};
    const char* rest = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%S", &t);
    if (!rest) throw bad("UTC YYYY-MM-DDTHH:MM:SS[.fff]Z, @EPOCH-SECONDS or +DURATION");
    int64_t frac_us = 0;
    if (*rest == '.') {
      int64_t scale = 100'000;
      for (++rest; *rest >= '0' && *rest <= '9'; ++rest, scale /= 10)
        if (scale > 0) frac_us += (*rest - '0') * scale;
    }
    if (std::string_view(rest) != "Z") throw bad("a UTC time ends with Z");
    ts = static_cast<int64_t>(timegm(&t)) * 1'000'000 + frac_us;
  }
  if (ts <= now_us) throw bad("that time has passed");
  if (ts - now_us > 7 * 86'400'000'000LL) throw bad("more than 7 days ahead");
  return ts;
}

}  // namespace kv::drive
