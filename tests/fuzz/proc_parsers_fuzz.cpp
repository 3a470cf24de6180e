// libFuzzer target for the /proc parsers (monitor/proc_parsers.hpp). /proc text is written by the
// kernel, but a process chooses its own comm (any bytes, parentheses included) and a parser bug
// is a kvmon crash. The first byte picks the parser. Invariants: parse_int round-trips, a comm is
// no longer than its file, device names are non-empty, ports are 0..65535. docs/fuzzing.md.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "proc_parsers.hpp"

using namespace kv::mon;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 15) {
    case 0: {
      auto r = parse_pid_stat(text);
      if (r && r.value().comm.size() > text.size()) std::abort();
      if (r) {
        for (int64_t ticks : {r.value().utime_ticks, r.value().stime_ticks, r.value().start_ticks})
          if (auto us = ticks_to_us(ticks, 100); us && ticks >= 0 && *us < 0) std::abort();
      }
      break;
    }
    case 1:
      (void)parse_pid_status(text);
      break;
    case 2:
      (void)parse_pid_io(text);
      break;
    case 3:
      (void)parse_loadavg(text);
      break;
    case 4:
      (void)parse_loadavg_last_pid(text);
      break;
    case 5:
      (void)parse_meminfo(text);
      break;
    case 6:
      (void)parse_vmstat(text);
      break;
    case 7: {
      // The fields feed ticks_to_us, which must not overflow whatever they hold.
      HostStat h = parse_host_stat(text);
      for (kv::OptInt v : {h.cpu_user_ticks, h.cpu_system_ticks, h.cpu_idle_ticks, h.boot_time_s})
        if (v) (void)ticks_to_us(*v, 100);
      break;
    }
    case 8:
      (void)parse_smaps_rollup_pss(text);
      break;
    case 9: {
      auto up = parse_uptime_us(text);
      if (up && up.value() < 0) std::abort();
      break;
    }
    case 10:
      (void)parse_pressure(text);
      break;
    case 11:
      for (const auto& d : parse_diskstats(text))
        if (d.device.empty()) std::abort();
      break;
    case 12:
      for (const auto& s : parse_net_tcp(text))
        if (s.local_port < 0 || s.local_port > 65535 || s.state < 0 || s.state > 255) std::abort();
      break;
    case 13: {
      // A /sys/block/<dev>/stat line is a /proc/diskstats line without major, minor and name.
      auto b = parse_block_stat(text);
      std::string line = "8 0 d " + std::string(text.substr(0, text.find('\n')));
      auto d = parse_diskstats(line);
      if (b.has_value() != (d.size() == 1)) std::abort();
      if (b && (!b->device.empty() || b->reads != d[0].reads || b->writes != d[0].writes ||
                b->sectors_read != d[0].sectors_read ||
                b->sectors_written != d[0].sectors_written || b->io_ms != d[0].io_ms)) {
        std::abort();
      }
      break;
    }
    default: {
      auto v = kv::parse_int(text);
      if (v && std::to_string(*v) != text && !(text.size() > 1 && text[0] == '0') &&
          !(text.size() >= 2 && text.substr(0, 2) == "-0"))
        std::abort();
      break;
    }
  }
  return 0;
}
