// The /metrics page made from batches: names, labels, units, counters, and unknown values left
// out rather than written as 0.
#include "metrics_text.hpp"

#include <gtest/gtest.h>

#include <string>

namespace kv::mon {
namespace {

ProcessSample sample(pid_t pid, int64_t start_ticks) {
  ProcessSample s;
  s.key = {pid, start_ticks};
  s.comm = "redis-server";
  s.rss_kib = 2048;
  s.swap_kib = 16;
  s.cpu_user_us = 1'500'000;
  s.cpu_system_us = 250'000;
  s.threads = 5;
  s.fds = 12;
  s.io_read_bytes = 4096;
  s.minor_faults = 77;
  return s;
}

InstanceRecord instance(pid_t pid, int64_t start_ticks, const std::string& selector) {
  InstanceRecord r;
  r.key = {pid, start_ticks};
  r.name = "redis-server";
  r.selector = selector;
  r.started_ts_us = 1'700'000'000'500'000;
  return r;
}

bool has_line(const std::string& page, const std::string& line) {
  return page.find("\n" + line + "\n") != std::string::npos || page.rfind(line + "\n", 0) == 0;
}

TEST(MetricsText, ProcessValuesInBaseUnitsWithTheirLabels) {
  MetricsRegistry reg({"name:redis-server"}, 100, 4096);
  Batch b;
  b.scheduled_ts_us = 1'700'000'001'000'000;
  b.new_instances.push_back(instance(42, 900, "name:redis-server"));
  b.processes.push_back(sample(42, 900));
  reg.update(b);
  std::string page = reg.render(false, {});
  // Named by target, name and place, never by pid (a restart continues the series); the pid
  // and kvmon's instance id are on the info series.
  const std::string l = R"({target="name:redis-server",name="redis-server",process="0")";
  EXPECT_TRUE(has_line(page, "kvmon_process_info" + l + R"(,pid="42",kvmon_instance="42@900"} 1)"))
      << page;
  EXPECT_EQ(page.find("instance=\"42@900\",pid"), std::string::npos) << page;
  EXPECT_TRUE(has_line(page, "kvmon_process_resident_memory_bytes" + l + "} 2097152")) << page;
  EXPECT_TRUE(has_line(page, "kvmon_process_swap_bytes" + l + "} 16384"));
  EXPECT_TRUE(has_line(page, "kvmon_process_cpu_seconds_total" + l + ",mode=\"user\"} 1.5"));
  EXPECT_TRUE(has_line(page, "kvmon_process_cpu_seconds_total" + l + ",mode=\"system\"} 0.25"));
  EXPECT_TRUE(has_line(page, "kvmon_process_threads" + l + "} 5"));
  EXPECT_TRUE(has_line(page, "kvmon_process_open_fds" + l + "} 12"));
  EXPECT_TRUE(has_line(page, "kvmon_process_io_read_bytes_total" + l + "} 4096"));
  EXPECT_TRUE(has_line(page, "kvmon_process_minor_faults_total" + l + "} 77"));
  EXPECT_TRUE(has_line(page, "kvmon_process_start_time_seconds" + l + "} 1700000000.5"));
  EXPECT_TRUE(has_line(page, "# TYPE kvmon_process_cpu_seconds_total counter"));
  EXPECT_TRUE(has_line(page, "# TYPE kvmon_process_resident_memory_bytes gauge"));
  EXPECT_TRUE(has_line(page, R"(kvmon_target_processes{target="name:redis-server"} 1)"));
  EXPECT_TRUE(has_line(page, R"(kvmon_target_restarts_total{target="name:redis-server"} 0)"));
  EXPECT_TRUE(has_line(page, "kvmon_ticks_total 1"));
  EXPECT_EQ(page.find("# EOF"), std::string::npos);  // text format 0.0.4 has no EOF marker
  // No cgroup read: no cgroup family.
  EXPECT_EQ(page.find("kvmon_process_cgroup_"), std::string::npos);
  Batch b2;
  ProcessSample s = sample(42, 900);
  s.cg_memory_bytes = 1 << 20;
  s.cg_cpu_throttled_us = 2'500'000;
  s.cg_events_oom_kill = 0;                // read, and none: a 0 that is known
  s.cg_memory_max_bytes = kNoCgroupLimit;  // "max": no number to give
  s.cg_psi_memory_full_us = 1'250'000;     // v2 memory.pressure's full total=
  b2.processes.push_back(s);
  reg.update(b2);
  page = reg.render(false, {});
  EXPECT_TRUE(has_line(page, "kvmon_process_cgroup_memory_bytes" + l + "} 1048576")) << page;
  EXPECT_TRUE(has_line(page, "kvmon_process_cgroup_cpu_throttled_seconds_total" + l + "} 2.5"));
  EXPECT_TRUE(has_line(page, "kvmon_process_cgroup_oom_kills_total" + l + "} 0"));
  EXPECT_EQ(page.find("kvmon_process_cgroup_memory_max_bytes"), std::string::npos);  // "max"
  EXPECT_TRUE(has_line(page, "# TYPE kvmon_process_cgroup_pressure_stall_seconds_total counter"));
  EXPECT_TRUE(has_line(page, "kvmon_process_cgroup_pressure_stall_seconds_total" + l +
                                 R"(,resource="memory",kind="full"} 1.25)"))
      << page;
  EXPECT_EQ(page.find(R"(resource="memory",kind="some")"), std::string::npos);  // unread
}

TEST(MetricsText, UnknownValuesAreLeftOutNeverZero) {
  MetricsRegistry reg({"pid:42"}, 100, 4096);
  Batch b;
  b.new_instances.push_back(instance(42, 900, "pid:42"));
  ProcessSample s = sample(42, 900);
  s.io_read_bytes.reset();  // /proc/PID/io unreadable (another user's process)
  s.fds.reset();
  s.major_faults.reset();
  b.processes.push_back(s);
  reg.update(b);
  std::string page = reg.render(false, SelfUsage{});
  EXPECT_EQ(page.find("kvmon_process_io_read_bytes"), std::string::npos) << page;
  EXPECT_EQ(page.find("kvmon_process_open_fds"), std::string::npos);
  EXPECT_EQ(page.find("kvmon_process_major_faults"), std::string::npos);
  EXPECT_EQ(page.find("kvmon_process_pss_bytes"), std::string::npos);  // no --pss-interval
  // No host sample yet: no host family at all, not zeros.
  EXPECT_EQ(page.find("kvmon_host_"), std::string::npos);
  // kvmon's own usage unread: left out too.
  EXPECT_EQ(page.find("\nprocess_cpu_seconds_total"), std::string::npos);
  EXPECT_EQ(page.find("\nprocess_resident_memory_bytes "), std::string::npos);

  HostSample h;
  h.mem_total_kib = 1000;
  h.psi_memory_some_avg10 = 12.5;     // percent: a ratio on the page
  h.psi_io_some_avg10 = 13.72;        // x 0.01 is 0.13720000000000002 in doubles: printed 0.1372
  h.psi_memory_some_us = 46'034'936;  // total=: a counter of stall seconds
  h.cpu_idle_ticks = 250;
  h.pswpin = 3;
  h.disks.push_back(DiskStat{"vda", 10, 8, 20, 16, 1500});
  Batch b2;
  b2.processes.push_back(s);
  b2.host = h;
  reg.update(b2);
  page = reg.render(false, SelfUsage{2.5, 1 << 20, std::nullopt});
  EXPECT_TRUE(has_line(page, "kvmon_host_memory_total_bytes 1024000")) << page;
  EXPECT_EQ(page.find("kvmon_host_memory_available_bytes"), std::string::npos);
  EXPECT_EQ(page.find("kvmon_host_load1"), std::string::npos);
  EXPECT_TRUE(
      has_line(page, R"(kvmon_host_pressure_avg10_ratio{resource="memory",kind="some"} 0.125)"));
  EXPECT_TRUE(
      has_line(page, R"(kvmon_host_pressure_avg10_ratio{resource="io",kind="some"} 0.1372)"))
      << page;
  EXPECT_EQ(page.find(R"(resource="io",kind="full")"), std::string::npos);
  EXPECT_TRUE(has_line(
      page, R"(kvmon_host_pressure_stall_seconds_total{resource="memory",kind="some"} 46.034936)"))
      << page;
  EXPECT_EQ(page.find(R"(kvmon_host_pressure_stall_seconds_total{resource="io")"),
            std::string::npos);
  EXPECT_TRUE(has_line(page, R"(kvmon_host_cpu_seconds_total{mode="idle"} 2.5)"));
  EXPECT_EQ(page.find(R"(kvmon_host_cpu_seconds_total{mode="user"})"), std::string::npos);
  EXPECT_TRUE(has_line(page, "kvmon_host_swapped_in_bytes_total 12288"));
  EXPECT_TRUE(has_line(page, R"(kvmon_host_disk_read_bytes_total{device="vda"} 4096)"));
  EXPECT_TRUE(has_line(page, R"(kvmon_host_disk_io_time_seconds_total{device="vda"} 1.5)"));
  EXPECT_TRUE(has_line(page, "process_cpu_seconds_total 2.5"));
  EXPECT_TRUE(has_line(page, "process_resident_memory_bytes 1048576"));
}

TEST(MetricsText, RestartsCountAndExitedInstancesLeaveThePage) {
  MetricsRegistry reg({"port:6379"}, 100, 4096);
  Batch b1;
  b1.new_instances.push_back(instance(42, 900, "port:6379"));
  b1.processes.push_back(sample(42, 900));
  b1.events.push_back(EventRecord{0, "target_found", "", ProcessKey{42, 900}});
  reg.update(b1);
  Batch b2;
  b2.events.push_back(EventRecord{0, "target_exited", "", ProcessKey{42, 900}});
  reg.update(b2);
  std::string page = reg.render(false, {});
  EXPECT_EQ(page.find("pid=\"42\""), std::string::npos) << page;
  EXPECT_TRUE(has_line(page, R"(kvmon_target_processes{target="port:6379"} 0)"));
  Batch b3;
  b3.new_instances.push_back(instance(77, 950, "port:6379"));
  b3.processes.push_back(sample(77, 950));
  b3.events.push_back(EventRecord{0, "target_restarted", "", ProcessKey{77, 950}});
  reg.update(b3);
  page = reg.render(false, {});
  EXPECT_TRUE(has_line(page, R"(kvmon_target_restarts_total{target="port:6379"} 1)")) << page;
  EXPECT_NE(page.find("pid=\"77\""), std::string::npos);
}

TEST(MetricsText, OpenMetricsNamesCounterFamiliesWithoutTotalAndEndsWithEof) {
  MetricsRegistry reg({"pid:42"}, 100, 4096);
  Batch b;
  b.new_instances.push_back(instance(42, 900, "pid:42"));
  b.processes.push_back(sample(42, 900));
  reg.update(b);
  std::string page = reg.render(true, {});
  EXPECT_TRUE(has_line(page, "# TYPE kvmon_process_cpu_seconds counter")) << page;
  EXPECT_NE(page.find("\nkvmon_process_cpu_seconds_total{"), std::string::npos);
  ASSERT_GE(page.size(), 6u);
  EXPECT_EQ(page.substr(page.size() - 6), "# EOF\n");
}

// OpenMetrics: a family whose name ends with a unit says it in a UNIT line (the spec: the name
// is suffixed by the unit), after its TYPE; the 0.0.4 text format has none.
TEST(MetricsText, OpenMetricsNamesTheUnitOfFamiliesThatEndWithOne) {
  MetricsRegistry reg({"pid:42"}, 100, 4096);
  Batch b;
  b.new_instances.push_back(instance(42, 900, "pid:42"));
  b.processes.push_back(sample(42, 900));
  reg.update(b);
  const std::string om = reg.render(true, {});
  EXPECT_TRUE(has_line(om, "# UNIT kvmon_process_cpu_seconds seconds")) << om;
  EXPECT_TRUE(has_line(om, "# UNIT kvmon_process_resident_memory_bytes bytes")) << om;
  EXPECT_EQ(om.find("# UNIT kvmon_process_threads"), std::string::npos) << om;
  size_t units = 0;
  for (size_t at = om.find("# UNIT "); at != std::string::npos; at = om.find("# UNIT ", at + 1)) {
    ++units;
    const std::string line = om.substr(at + 7, om.find('\n', at) - at - 7);
    const std::string name = line.substr(0, line.find(' ')), unit = line.substr(line.find(' ') + 1);
    EXPECT_EQ(name.substr(name.size() - unit.size() - 1), "_" + unit) << line;
    const size_t type = om.find("# TYPE " + name + " ");
    EXPECT_LT(type, at) << line;  // its TYPE first
  }
  EXPECT_GE(units, 5u) << om;
  EXPECT_EQ(reg.render(false, {}).find("# UNIT"), std::string::npos);
}

TEST(MetricsText, LabelValuesAreEscaped) {
  MetricsRegistry reg({"name:a\"b\\c"}, 100, 4096);
  std::string page = reg.render(false, {});
  EXPECT_TRUE(has_line(page, R"(kvmon_target_restarts_total{target="name:a\"b\\c"} 0)")) << page;
}

}  // namespace
}  // namespace kv::mon
