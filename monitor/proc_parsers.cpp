#include "proc_parsers.hpp"

#include <charconv>

namespace kv::mon {
namespace {

// 9.2e12 s (292,000 years) * 1e6 is just inside int64.
constexpr double kMaxUptimeS = 9.2e12;

std::optional<double> parse_real(std::string_view text) {
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || p != text.data() + text.size()) return std::nullopt;
  return v;
}

// The first token of `s` (split on spaces/tabs); empty if there is none. No allocation.
std::string_view first_token(std::string_view s) {
  size_t i = s.find_first_not_of(" \t");
  if (i == std::string_view::npos) return {};
  s.remove_prefix(i);
  return s.substr(0, s.find_first_of(" \t"));
}

// "Key:   1234 kB" → 1234.
OptInt value_after_colon(std::string_view line) {
  size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view token = first_token(line.substr(colon + 1));
  if (token.empty()) return std::nullopt;
  return parse_int(token);
}

}  // namespace

OptInt ticks_to_us(int64_t ticks, int64_t ticks_per_s) {
  int64_t us = 0;
  if (ticks_per_s <= 0 || __builtin_mul_overflow(ticks, int64_t{1'000'000}, &us)) {
    return std::nullopt;
  }
  return us / ticks_per_s;
}

Result<PidStat> parse_pid_stat(std::string_view text) {
  size_t open = text.find('(');
  size_t close = text.rfind(')');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) {
    return Error{"stat: no '(comm)' field"};
  }
  PidStat st;
  st.comm = std::string(text.substr(open + 1, close - open - 1));
  // After ')': field 3 (state) is tokens[0]; field N is tokens[N - 3]. Read every tick: the
  // fields up to rss go into a fixed array.
  constexpr size_t kLastField = 24;  // rss
  const auto fields = first_fields<kLastField - 2>(trim_blanks(text.substr(close + 1)));
  if (fields.total < kLastField - 2) {
    return Error{"stat: truncated (" + std::to_string(fields.total + 2) + " fields)"};
  }
  const auto& f = fields.field;
  if (f[0].size() != 1) return Error{"stat: bad state field"};
  st.state = f[0][0];
  struct Want {
    int field;
    int64_t* into;
  };
  const Want wants[] = {{4, &st.ppid},         {10, &st.minor_faults}, {12, &st.major_faults},
                        {14, &st.utime_ticks}, {15, &st.stime_ticks},  {20, &st.num_threads},
                        {22, &st.start_ticks}, {23, &st.vsize_bytes},  {24, &st.rss_pages}};
  for (const Want& w : wants) {
    auto v = parse_int(f[static_cast<size_t>(w.field - 3)]);
    if (!v) return Error{"stat: field " + std::to_string(w.field) + " is not a number"};
    *w.into = *v;
  }
  return st;
}

PidStatus parse_pid_status(std::string_view text) {
  PidStatus s;
  struct Key {
    std::string_view name;
    OptInt PidStatus::*field;
  };
  static constexpr Key kKeys[] = {
      {"PPid", &PidStatus::ppid},
      {"VmRSS", &PidStatus::vm_rss_kib},
      {"RssAnon", &PidStatus::rss_anon_kib},
      {"RssFile", &PidStatus::rss_file_kib},
      {"RssShmem", &PidStatus::rss_shmem_kib},
      {"VmSwap", &PidStatus::vm_swap_kib},
      {"VmSize", &PidStatus::vm_size_kib},
      {"Threads", &PidStatus::threads},
      {"voluntary_ctxt_switches", &PidStatus::ctx_voluntary},
      {"nonvoluntary_ctxt_switches", &PidStatus::ctx_involuntary},
  };
  for_each_line(text, [&](std::string_view line) {
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return;
    std::string_view key = line.substr(0, colon);
    if (key == "Name") {
      auto t = line.substr(colon + 1);
      while (!t.empty() && (t.front() == '\t' || t.front() == ' ')) t.remove_prefix(1);
      s.name = std::string(t);
      return;
    }
    for (const Key& k : kKeys) {
      if (k.name == key) s.*(k.field) = value_after_colon(line);
    }
  });
  return s;
}

PidIo parse_pid_io(std::string_view text) {
  PidIo io;
  for_each_line(text, [&](std::string_view line) {
    if (line.starts_with("read_bytes:")) io.read_bytes = value_after_colon(line);
    if (line.starts_with("write_bytes:")) io.write_bytes = value_after_colon(line);
  });
  return io;
}

Result<LoadAvg> parse_loadavg(std::string_view text) {
  const auto f = first_fields<3>(text);  // every host sample: no allocation
  if (f.total < 3) return Error{"loadavg: truncated"};
  auto a = parse_real(f.field[0]), b = parse_real(f.field[1]), c = parse_real(f.field[2]);
  if (!a || !b || !c) return Error{"loadavg: not numbers"};
  return LoadAvg{*a, *b, *c};
}

OptInt parse_loadavg_last_pid(std::string_view text) {
  const auto f = first_fields<5>(trim_blanks(text));  // every tick: no allocation
  if (f.total != 5 || f.field[3].find('/') == std::string_view::npos) return std::nullopt;
  return parse_int(f.field[4]);
}

MemInfo parse_meminfo(std::string_view text) {
  MemInfo m;
  for_each_line(text, [&](std::string_view line) {
    std::string_view key = line.substr(0, line.find(':'));
    if (key == "MemTotal")
      m.mem_total_kib = value_after_colon(line);
    else if (key == "MemAvailable")
      m.mem_available_kib = value_after_colon(line);
    else if (key == "SwapTotal")
      m.swap_total_kib = value_after_colon(line);
    else if (key == "SwapFree")
      m.swap_free_kib = value_after_colon(line);
  });
  return m;
}

VmStat parse_vmstat(std::string_view text) {
  VmStat v;
  for_each_line(text, [&](std::string_view line) {
    // ~180 lines, 3 wanted: look at the key before splitting.
    if (!line.starts_with("pswp") && !line.starts_with("pgmajfault")) return;
    const auto f = first_fields<2>(line);
    if (f.total != 2) return;
    if (f.field[0] == "pswpin")
      v.pswpin = parse_int(f.field[1]);
    else if (f.field[0] == "pswpout")
      v.pswpout = parse_int(f.field[1]);
    else if (f.field[0] == "pgmajfault")
      v.pgmajfault = parse_int(f.field[1]);
  });
  return v;
}

HostStat parse_host_stat(std::string_view text) {
  HostStat h;
  for_each_line(text, [&](std::string_view line) {
    // Skip the long per-CPU, intr and softirq lines before splitting.
    if (!line.starts_with("cpu ") && !line.starts_with("cpu\t") && !line.starts_with("btime")) {
      return;
    }
    const auto f = first_fields<9>(line);
    if (f.total == 0) return;
    if (f.field[0] == "cpu") {
      // cpu user nice system idle iowait irq softirq steal ...
      auto at = [&](size_t i) { return i < f.total ? parse_int(f.field[i]) : std::nullopt; };
      auto user = at(1), nice = at(2);
      int64_t sum = 0;
      if (user && nice && !__builtin_add_overflow(*user, *nice, &sum)) h.cpu_user_ticks = sum;
      h.cpu_system_ticks = at(3);
      h.cpu_idle_ticks = at(4);
      h.cpu_iowait_ticks = at(5);
      h.cpu_steal_ticks = at(8);
    } else if (f.field[0] == "btime" && f.total == 2) {
      h.boot_time_s = parse_int(f.field[1]);
    }
  });
  return h;
}

OptInt parse_smaps_rollup_pss(std::string_view text) {
  OptInt pss;
  for_each_line(text, [&](std::string_view line) {
    if (line.starts_with("Pss:")) pss = value_after_colon(line);
  });
  return pss;
}

Result<int64_t> parse_uptime_us(std::string_view text) {
  auto f = split_fields(text);
  if (f.empty()) return Error{"uptime: empty"};
  auto v = parse_real(f[0]);
  // Negated so that NaN fails too; the bound keeps *v * 1e6 inside int64 (a cast of a double
  // out of range is undefined: the fuzzer found "7.8e39").
  if (!v || !(*v >= 0 && *v < kMaxUptimeS))
    return Error{"uptime: not a number of seconds in range"};
  return static_cast<int64_t>(*v * 1e6);
}

Pressure parse_pressure(std::string_view text) {
  Pressure p;
  for_each_line(text, [&](std::string_view line) {
    // some avg10=A avg60=B avg300=C total=T, per cgroup per tick: no allocation
    std::string_view kind, avg10;
    OptInt total;
    const size_t n = for_each_field(line, [&](size_t i, std::string_view f) {
      if (i == 0)
        kind = f;
      else if (i == 1)
        avg10 = f;
      else if (f.starts_with("total="))
        total = parse_int(f.substr(6));
    });
    if (n < 2 || !avg10.starts_with("avg10=")) return;
    auto v = parse_real(avg10.substr(6));
    if (kind == "some") {
      p.some_avg10 = v;
      p.some_total_us = total;
    } else if (kind == "full") {
      p.full_avg10 = v;
      p.full_total_us = total;
    }
  });
  return p;
}

std::vector<DiskStat> parse_diskstats(std::string_view text) {
  std::vector<DiskStat> out;
  for_each_line(text, [&](std::string_view line) {
    // major minor name reads merged sectors ms writes merged sectors ms inflight io_ms ...
    auto f = split_fields(line);
    if (f.size() < 14) return;  // major minor name + the 11 counters read below
    int64_t v[11];
    for (size_t i = 0; i < 11; ++i) {
      auto n = parse_int(f[3 + i]);
      if (!n) return;
      v[i] = *n;
    }
    out.push_back(DiskStat{std::string(f[2]), v[0], v[2], v[4], v[6], v[9]});
  });
  return out;
}

std::optional<DiskStat> parse_block_stat(std::string_view text) {
  // reads merged sectors ms writes merged sectors ms inflight io_ms ... on one line
  size_t end = text.find('\n');
  const auto f = first_fields<11>(text.substr(0, end));  // every host sample: no allocation
  if (f.total < 11) return std::nullopt;
  int64_t v[11];
  for (size_t i = 0; i < 11; ++i) {
    auto n = parse_int(f.field[i]);
    if (!n) return std::nullopt;
    v[i] = *n;
  }
  return DiskStat{{}, v[0], v[2], v[4], v[6], v[9]};
}

std::vector<TcpSocket> parse_net_tcp(std::string_view text) {
  std::vector<TcpSocket> out;
  for_each_line(text, [&](std::string_view line) {
    // sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
    auto f = split_fields(line);
    if (f.size() < 10) return;
    size_t colon = f[1].rfind(':');
    if (colon == std::string_view::npos) return;
    std::string_view port_hex = f[1].substr(colon + 1);
    int port = 0, state = 0;
    // The whole field, in range: the kernel writes 4 hex digits of port and 2 of state.
    auto hex = [](std::string_view t, int& v, int max) {
      auto r = std::from_chars(t.data(), t.data() + t.size(), v, 16);
      return r.ec == std::errc() && r.ptr == t.data() + t.size() && v >= 0 && v <= max;
    };
    auto inode = parse_int(f[9]);
    if (!hex(port_hex, port, 0xFFFF) || !hex(f[3], state, 0xFF) || !inode) return;
    out.push_back(TcpSocket{port, state, *inode});
  });
  return out;
}

}  // namespace kv::mon
