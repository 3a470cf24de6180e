// Integration: the real kvmon with --metrics watching a real redis-server, scraped over HTTP
// (curl, and raw requests), its values checked against /proc, its page against promtool.
#include <dirent.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "db_query.hpp"
#include "kvmon_process.hpp"
#include "proc_parsers.hpp"
#include "servers.hpp"

namespace kv::mon {
namespace {

using kv::test::Process;
using kv::test::slurp;
using kv::test::StoreServer;
using kv::test::TempDir;

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";

// The whole HTTP answer to `request` (kvmon closes the connection after each).
std::string http(int port, const std::string& request) {
  return kv::test::tcp_request(port, request, "\x01 never", 10'000);
}

std::string get(int port, const std::string& path, const std::string& headers = "") {
  return http(port, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + headers + "\r\n");
}

std::string status_line(const std::string& answer) { return answer.substr(0, answer.find("\r\n")); }

std::string body(const std::string& answer) {
  size_t p = answer.find("\r\n\r\n");
  return p == std::string::npos ? std::string() : answer.substr(p + 4);
}

// Series ("name{labels}") to value.
std::map<std::string, double> parse_page(const std::string& page) {
  std::map<std::string, double> out;
  std::istringstream in(page);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t sp = line.rfind(' ');
    out[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return out;
}

bool wait_for(const std::function<bool()>& done, int timeout_ms) {
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return done();
}

int count_fds(pid_t pid) {
  DIR* d = opendir(("/proc/" + std::to_string(pid) + "/fd").c_str());
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d)) {
    if (e->d_name[0] != '.') ++n;
  }
  closedir(d);
  return n;
}

// Serving /metrics, logging at debug.
struct Kvmon : kv::test::KvmonProcess {
  explicit Kvmon(std::vector<std::string> args) {
    args.insert(args.begin(), {"--log-level", "debug"});
    start(std::move(args), "--metrics");
  }
  // Waits for a page that shows `want`; returns it.
  std::string page_with(const std::string& want, const std::string& headers = "") {
    std::string page;
    wait_for(
        [&] {
          try {
            page = body(get(port, "/metrics", headers));
          } catch (const std::exception&) {
            page.clear();  // not listening yet
          }
          return page.find(want) != std::string::npos;
        },
        15'000);
    return page;
  }
};

TEST(KvmonMetrics, ACurlScrapeOfRedisMatchesProcAndPassesPromtool) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string target = "port:" + std::to_string(redis.port());
  Kvmon kvmon({"--port", std::to_string(redis.port()), "--interval", "200ms"});
  const std::string pid = std::to_string(redis.pid());
  ASSERT_NE(kvmon.page_with("pid=\"" + pid + "\"").find("kvmon_host_memory_total_bytes"),
            std::string::npos)
      << kvmon.log();

  // A real scraper: curl, as Prometheus would ask (text format).
  const std::string curl = kv::test::find_program("curl");
  std::string page;
  if (curl.empty()) {
    if (kv::test::servers_required()) FAIL() << "curl is not installed";
    page = body(get(kvmon.port, "/metrics"));
  } else {
    Process c({curl, "-sS", "-D", dir.file("headers"), "-o", dir.file("page"),
               "http://127.0.0.1:" + std::to_string(kvmon.port) + "/metrics"},
              dir.file("curl.log"));
    ASSERT_EQ(c.wait(20'000), 0) << slurp(dir.file("curl.log"));
    EXPECT_NE(slurp(dir.file("headers")).find("Content-Type: text/plain; version=0.0.4"),
              std::string::npos)
        << slurp(dir.file("headers"));
    page = slurp(dir.file("page"));
  }
  const std::string redis_status = slurp("/proc/" + pid + "/status");
  const std::string redis_stat = slurp("/proc/" + pid + "/stat");
  auto m = parse_page(page);
  // The store is its target's first process of its name: process="0"; its pid is on the info.
  const std::string l = "{target=\"" + target + "\",name=\"redis-server\",process=\"0\"";
  EXPECT_NE(
      page.find("kvmon_process_info" + l + ",pid=\"" + pid + "\",kvmon_instance=\"" + pid + "@"),
      std::string::npos)
      << page;
  auto value = [&](const std::string& name, const std::string& extra = "") -> double {
    for (const auto& [series, v] : m) {
      if (series.rfind(name + l, 0) == 0 &&
          (extra.empty() || series.find(extra) != std::string::npos)) {
        return v;
      }
    }
    ADD_FAILURE() << "no " << name << extra << " for pid " << pid << " in\n" << page;
    return -1;
  };
  PidStatus st = parse_pid_status(redis_status);
  auto ps = parse_pid_stat(redis_stat);
  ASSERT_TRUE(ps) << redis_stat;
  // An idle redis-server: threads and fds stay put; RSS moves by a few pages at most.
  EXPECT_EQ(value("kvmon_process_threads"), static_cast<double>(*st.threads));
  EXPECT_EQ(value("kvmon_process_open_fds"), count_fds(redis.pid()));
  EXPECT_NEAR(value("kvmon_process_resident_memory_bytes"),
              static_cast<double>(*st.vm_rss_kib) * 1024.0,
              static_cast<double>(*st.vm_rss_kib) * 1024.0 * 0.1);
  EXPECT_EQ(value("kvmon_process_swap_bytes"), static_cast<double>(*st.vm_swap_kib) * 1024.0);
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double cpu_now =
      static_cast<double>(ps.value().utime_ticks + ps.value().stime_ticks) / ticks;
  const double cpu = value("kvmon_process_cpu_seconds_total", "mode=\"user\"") +
                     value("kvmon_process_cpu_seconds_total", "mode=\"system\"");
  EXPECT_LE(cpu, cpu_now + 1e-9);
  EXPECT_GE(cpu, cpu_now - 0.5);  // sampled at most one tick (200 ms) before
  EXPECT_LE(value("kvmon_process_minor_faults_total"),
            static_cast<double>(ps.value().minor_faults));
  EXPECT_GT(value("kvmon_process_minor_faults_total"), 0);
  EXPECT_EQ(m.at("kvmon_target_processes{target=\"" + target + "\"}"), 1);
  EXPECT_EQ(m.at("kvmon_target_restarts_total{target=\"" + target + "\"}"), 0);

  // The host: MemTotal and SwapTotal do not move.
  MemInfo mi = parse_meminfo(slurp("/proc/meminfo"));
  EXPECT_EQ(m.at("kvmon_host_memory_total_bytes"), static_cast<double>(*mi.mem_total_kib) * 1024.0);
  EXPECT_EQ(m.at("kvmon_host_swap_total_bytes"), static_cast<double>(*mi.swap_total_kib) * 1024.0);
  EXPECT_TRUE(m.count("kvmon_host_load1"));
  // PSI where the kernel has it, and absent (not 0) where it has not.
  const bool psi = std::ifstream("/proc/pressure/memory").good();
  EXPECT_EQ(m.count("kvmon_host_pressure_avg10_ratio{resource=\"memory\",kind=\"some\"}"),
            psi ? 1u : 0u);

  // kvmon's own cost, from its /proc.
  auto self = parse_pid_stat(slurp("/proc/" + std::to_string(kvmon.proc.pid()) + "/stat"));
  ASSERT_TRUE(self);
  EXPECT_GT(m.at("process_resident_memory_bytes"), 0);
  EXPECT_LE(
      m.at("process_cpu_seconds_total"),
      static_cast<double>(self.value().utime_ticks + self.value().stime_ticks) / ticks + 1e-9);
  // One io_context thread serves the page: no thread is added for it. Compared with the same
  // kvmon without --metrics (a sanitizer's runtime may add a thread of its own to both).
  auto threads_of = [](pid_t of) {
    return parse_pid_status(slurp("/proc/" + std::to_string(of) + "/status")).threads.value_or(-1);
  };
  Process plain({kKvmon, "--db", dir.file("plain.db"), "--port", std::to_string(redis.port()),
                 "--interval", "200ms", "--flush-interval", "1s"},
                dir.file("plain.log"));
  ASSERT_TRUE(wait_for(
      [&] {
        try {
          return kv::test::query_int(dir.file("plain.db"), "SELECT COUNT(*) FROM process_samples") >
                 0;
        } catch (const std::exception&) {
          return false;  // not created yet
        }
      },
      20'000))
      << slurp(dir.file("plain.log"));
  EXPECT_EQ(threads_of(kvmon.proc.pid()), threads_of(plain.pid()));
  EXPECT_GE(threads_of(plain.pid()), 2);  // main + the writer

  // promtool (Debian's prometheus package) lints the page.
  const std::string promtool = kv::test::find_program("promtool");
  if (promtool.empty()) {
    if (kv::test::servers_required()) FAIL() << "promtool is not installed (package prometheus)";
    std::cerr << "promtool not installed: page not linted\n";
  } else {
    std::ofstream(dir.file("page.txt")) << page;
    std::string cmd = promtool + " check metrics < " + dir.file("page.txt") + " > " +
                      dir.file("promtool.log") + " 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << slurp(dir.file("promtool.log")) << page;
  }

  // OpenMetrics when asked for.
  std::string om =
      get(kvmon.port, "/metrics", "Accept: application/openmetrics-text; version=1.0.0\r\n");
  EXPECT_NE(om.find("Content-Type: application/openmetrics-text"), std::string::npos) << om;
  EXPECT_EQ(om.substr(om.size() - 6), "# EOF\n");
  EXPECT_NE(om.find("# TYPE kvmon_process_cpu_seconds counter"), std::string::npos);
}

TEST(KvmonMetrics, ARestartIsCountedAndTheNewPidReplacesTheOld) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string target = "port:" + std::to_string(redis.port());
  Kvmon kvmon({"--port", std::to_string(redis.port()), "--interval", "100ms"});
  const std::string old_pid = "pid=\"" + std::to_string(redis.pid()) + "\"";
  ASSERT_NE(kvmon.page_with(old_pid), "") << kvmon.log();
  redis.stop();
  redis.restart();
  const std::string new_pid = "pid=\"" + std::to_string(redis.pid()) + "\"";
  std::string page = kvmon.page_with(new_pid);
  ASSERT_NE(page.find(new_pid), std::string::npos) << kvmon.log();
  EXPECT_EQ(page.find(old_pid), std::string::npos) << page;
  EXPECT_EQ(parse_page(page).at("kvmon_target_restarts_total{target=\"" + target + "\"}"), 1);
  // The restarted store continues the old series: named by target, name and place, not pid.
  EXPECT_EQ(parse_page(page).count("kvmon_process_threads{target=\"" + target +
                                   "\",name=\"redis-server\",process=\"0\"}"),
            1u)
      << page;
}

TEST(KvmonMetrics, ATokenFileMakesScrapersPresentItAsBearer) {
  TempDir dir;
  const std::string token = "0123456789abcdef0123456789abcdef";
  std::ofstream(dir.file("token")) << token << "\n";
  chmod(dir.file("token").c_str(), 0600);
  Kvmon kvmon({"--token-file", dir.file("token"), "--interval", "100ms"});
  const std::string good = "Authorization: Bearer " + token + "\r\n";
  ASSERT_NE(kvmon.page_with("kvmon_ticks_total", good), "") << kvmon.log();
  std::string none = get(kvmon.port, "/metrics");
  EXPECT_EQ(status_line(none), "HTTP/1.1 401 Unauthorized") << none;
  EXPECT_NE(none.find("WWW-Authenticate: Bearer"), std::string::npos);
  EXPECT_EQ(none.find("kvmon_"), std::string::npos);
  std::string wrong = get(kvmon.port, "/metrics", "Authorization: Bearer " + token + "0\r\n");
  EXPECT_EQ(status_line(wrong), "HTTP/1.1 401 Unauthorized") << wrong;
  EXPECT_EQ(status_line(get(kvmon.port, "/metrics", "authorization: bearer " + token + "\r\n")),
            "HTTP/1.1 200 OK");
  // After three free failures the address is shut out for a while: 429, token unchecked.
  for (int i = 0; i < 4; ++i) get(kvmon.port, "/metrics");
  std::string shut = get(kvmon.port, "/metrics", good);
  EXPECT_EQ(status_line(shut), "HTTP/1.1 429 Too Many Requests") << shut;
  EXPECT_NE(shut.find("Retry-After: "), std::string::npos);
}

TEST(KvmonMetrics, BadRequestsGetAnAnswerAndSilentOnesAreClosed) {
  TempDir dir;
  Kvmon kvmon({"--interval", "100ms"});
  ASSERT_NE(kvmon.page_with("kvmon_ticks_total"), "") << kvmon.log();
  EXPECT_EQ(status_line(http(kvmon.port, "GARBAGE\r\n\r\n")), "HTTP/1.1 400 Bad Request");
  EXPECT_EQ(status_line(http(kvmon.port, "POST /metrics HTTP/1.1\r\n\r\n")),
            "HTTP/1.1 405 Method Not Allowed");
  EXPECT_EQ(status_line(get(kvmon.port, "/nothing")), "HTTP/1.1 404 Not Found");
  std::string head = http(kvmon.port, "HEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(status_line(head), "HTTP/1.1 200 OK");
  EXPECT_EQ(body(head), "");
  // A head that never ends is cut at 8 KiB. 9000 bytes: kvmon reads them all before it answers,
  // so its close cannot reset the connection before the answer is read.
  std::string huge = "GET /metrics HTTP/1.1\r\nX-Pad: ";
  huge += std::string(9000 - huge.size(), 'a');
  EXPECT_EQ(status_line(http(kvmon.port, huge)), "HTTP/1.1 431 Request Header Fields Too Large");
  // A connection that sends nothing is closed after the 10 s deadline; kvmon keeps sampling.
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(static_cast<uint16_t>(kvmon.port));
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  const auto t0 = std::chrono::steady_clock::now();
  const double ticks_before = parse_page(body(get(kvmon.port, "/metrics"))).at("kvmon_ticks_total");
  pollfd p{fd, POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 30'000), 1);
  char c;
  EXPECT_EQ(::read(fd, &c, 1), 0);  // closed, nothing sent
  ::close(fd);
  const auto waited = std::chrono::steady_clock::now() - t0;
  EXPECT_GE(waited, std::chrono::seconds(9));
  EXPECT_GT(parse_page(body(get(kvmon.port, "/metrics"))).at("kvmon_ticks_total"),
            ticks_before + 50);
}

}  // namespace
}  // namespace kv::mon
