// kvdrive's build and host as run_metadata facts: see run_metadata.hpp.
#include "run/run_metadata.hpp"

#include <sys/timex.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <optional>

#include "kvbench/version.hpp"

namespace kv::drive {
namespace {

// The value after "key" and its colon on the first line of `path` that starts with it.
std::optional<std::string> field_of(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key, 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    if (line.find_first_not_of(" \t", key.size()) != colon) continue;  // "model name" exactly
    const auto start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? std::string() : line.substr(start);
  }
  return std::nullopt;
}

}  // namespace

ResultsWriter::Metadata clock_metadata() {
  timex tx{};  // modes 0: read only, no privilege needed
  const int state = adjtimex(&tx);
  if (state < 0)
    return {{"clock_synchronized", std::nullopt},
            {"clock_maxerror_us", std::nullopt},
            {"clock_esterror_us", std::nullopt}};
  const bool synced = (tx.status & STA_UNSYNC) == 0 && state != TIME_ERROR;
  auto bound = [&](long v) {
    return synced ? std::optional<std::string>(std::to_string(v)) : std::nullopt;
  };
  return {{"clock_synchronized", std::string(synced ? "yes" : "no")},
          {"clock_maxerror_us", bound(tx.maxerror)},
          {"clock_esterror_us", bound(tx.esterror)}};
}

ResultsWriter::Metadata host_metadata(const std::string& proc_root) {
  ResultsWriter::Metadata out;
  auto maybe = [](std::string s) {
    return s.empty() ? std::optional<std::string>() : std::optional<std::string>(s);
  };
  out.emplace_back("kvbench_version", version());
  out.emplace_back("git_revision", maybe(git_revision()));
  utsname u{};
  if (::uname(&u) == 0) {
    out.emplace_back("kernel", std::string(u.sysname) + " " + u.release + " " + u.version);
    out.emplace_back("machine", std::string(u.machine));
  } else {
    out.emplace_back("kernel", std::nullopt);
    out.emplace_back("machine", std::nullopt);
  }
  out.emplace_back("cpu_model", field_of(proc_root + "/cpuinfo", "model name"));
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  out.emplace_back("cpu_count",
                   cpus > 0 ? std::optional<std::string>(std::to_string(cpus)) : std::nullopt);
  std::optional<std::string> mem = field_of(proc_root + "/meminfo", "MemTotal");
  if (mem) {
    const auto sp = mem->find(' ');  // "16318848 kB"
    mem = mem->substr(0, sp);
  }
  out.emplace_back("mem_total_kib", maybe(mem.value_or("")));
  return out;
}

}  // namespace kv::drive
