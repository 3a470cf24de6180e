// kvdrive run --monitor against a scripted fake kvmon that misbehaves (no ticks, thousands of
// processes, impossible times, broken sessions, floods of events or bytes): dropped or refused,
// kvdrive's memory bounded, nothing of it stored, the run ending on time. And the link's token:
// a short one refused, a token file others can read warned of.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <thread>
#include <utility>

#include "kvbench/clock.hpp"
#include "kvbench/protocol.hpp"
#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";

// A scripted fake kvmon (docs/protocol.md): answers hello, time and subscribe like kvmon, then
// floods. Mode `no_tick`: process samples and never a `tick`; `instances`: 1,000 new
// processes announced per tick, ticks as fast as the socket takes them.
class FakeKvmon {
 public:
  // bad_clock: its time replies say INT64_MIN; bad_row_time: a sample at ts INT64_MAX;
  // endless_line: after subscribe, one line that never ends; big_events: 250 KB event lines;
  // byte_flood: complete ticks, each after 1,000 lines of 4 KB that no kvmon sends (a newer
  // verb, which kvdrive ignores): bytes alone, nothing stored.
  enum class Mode {
    no_tick,
    instances,
    bad_clock,
    bad_row_time,
    endless_line,
    big_events,
    byte_flood
  };
  explicit FakeKvmon(Mode mode) : mode_(mode) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), len) != 0 || listen(listen_fd_, 8) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
      throw std::runtime_error("fake kvmon: cannot listen");
    }
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~FakeKvmon() {
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    thread_.join();
    close(listen_fd_);
  }
  int port() const { return port_; }
  int connections() const { return connections_; }

 private:
  void serve() {
    while (!stop_) {
      pollfd p{listen_fd_, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) continue;
      ++connections_;
      timeval tv{0, 200'000};  // so a blocked send looks at stop_ again
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
      talk(fd);
      close(fd);
    }
  }
  bool send_all(int fd, const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      if (stop_) return false;
      ssize_t n = send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }
  // Answers requests until `subscribe`; false if the peer went away.
  bool handshake(int fd) {
    std::string buf;
    char chunk[4096];
    while (!stop_) {
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        auto m = kv::proto::parse_message(std::string_view(buf).substr(0, nl));
        buf.erase(0, nl + 1);
        if (!m) return false;
        const int64_t now = kv::now_ts_us();
        kv::proto::Message r(m.value().verb);
        if (m.value().verb == "hello") {
          r.add("v", 1).add("kvmon", "fake").add("host", "fakehost").add("pid", 4242);
          r.add("started_ts_us", now - 1'000'000).add("interval_us", 100'000);
          r.add("host_interval_us", 1'000'000).add("command_line", "fake");
          r.add("oldest_ts_us", now).add("newest_ts_us", now);
        } else if (m.value().verb == "time") {
          r.add("id", m.value().get_text("id"))
              .add("now_ts_us",
                   mode_ == Mode::bad_clock ? std::numeric_limits<int64_t>::min() : now);
        } else if (m.value().verb == "subscribe") {
          kv::proto::Message s("subscribed");
          s.add("interval_us", 100'000).add("since_ts_us", now).add("oldest_ts_us", now);
          s.add("newest_ts_us", now);
          return send_all(fd, kv::proto::encode(s));
        }
        if (!send_all(fd, kv::proto::encode(r))) return false;
      }
      pollfd p{fd, POLLIN, 0};
      if (poll(&p, 1, 100) <= 0) continue;
      ssize_t n = recv(fd, chunk, sizeof chunk, 0);
      if (n <= 0) return false;
      buf.append(chunk, static_cast<size_t>(n));
    }
    return false;
  }
  void talk(int fd) {
    if (!handshake(fd)) return;
    int64_t pid = 1000;
    while (!stop_) {
      std::string lines;
      const int64_t now = kv::now_ts_us();
      if (mode_ == Mode::endless_line) {
        if (!send_all(fd, std::string(64 << 10, 'x'))) return;
        continue;
      }
      if (mode_ == Mode::big_events) {
        kv::proto::Message m("event");
        m.add("ts_us", now).add("kind", "flood").add("message", std::string(250'000, 'e'));
        lines += kv::proto::encode(m);
        lines += kv::proto::encode(kv::proto::Message("tick").add("scheduled_ts_us", now));
      } else if (mode_ == Mode::byte_flood) {
        const std::string noise =
            kv::proto::encode(kv::proto::Message("noise").add("x", std::string(4000, 'n')));
        for (int i = 0; i < 1000; ++i) lines += noise;
        lines += kv::proto::encode(kv::proto::Message("tick").add("scheduled_ts_us", now));
      } else if (mode_ == Mode::bad_row_time) {
        kv::proto::Message m("proc");
        m.add("pid", 1).add("start_ticks", 1).add("ts_us", std::numeric_limits<int64_t>::max());
        m.add("scheduled_ts_us", now).add("rss_kib", 1000);
        lines += kv::proto::encode(m);
        lines += kv::proto::encode(kv::proto::Message("tick").add("scheduled_ts_us", now));
      } else if (mode_ == Mode::no_tick) {
        for (int i = 0; i < 1000; ++i) {
          kv::proto::Message m("proc");
          m.add("pid", 1).add("start_ticks", 1).add("ts_us", now).add("scheduled_ts_us", now);
          m.add("rss_kib", 1000).add("swap_kib", 0).add("cpu_user_us", i);
          lines += kv::proto::encode(m);
        }
      } else {
        for (int i = 0; i < 1000; ++i, ++pid) {
          kv::proto::Message m("instance");
          m.add("pid", pid).add("start_ticks", pid).add("started_ts_us", now).add("name", "x");
          m.add("command_line", "x").add("selector", "name:x").add("first_seen_ts_us", now);
          lines += kv::proto::encode(m);
        }
        lines += kv::proto::encode(kv::proto::Message("tick").add("scheduled_ts_us", now));
      }
      if (!send_all(fd, lines)) return;
    }
  }

  Mode mode_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

// The highest VmRSS of `pid` seen while it runs (polled), KiB.
int64_t peak_rss_kib_until_exit(Process& p, int timeout_ms, int* exit_code) {
  int64_t peak = 0;
  auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < end) {
    std::ifstream status("/proc/" + std::to_string(p.pid()) + "/status");
    std::string line;
    while (std::getline(status, line)) {
      if (line.rfind("VmRSS:", 0) == 0) peak = std::max<int64_t>(peak, std::stoll(line.substr(6)));
    }
    int code = p.wait(50);
    if (code != -1) {
      *exit_code = code;
      return peak;
    }
  }
  *exit_code = -1;
  return peak;
}

void expect_bounded_and_dropped(FakeKvmon::Mode mode, const char* what) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto run_args = [&](const std::string& db) {
    return std::vector<std::string>{kKvdrive,     "run",    "--db",      dir.file(db), "--target",
                                    redis.uri(),  "--keys", "1000",      "--phases",   "mixed",
                                    "--duration", "3s",     "--threads", "1"};
  };
  // The same run without a link: what kvdrive itself takes in this build (a sanitizer's shadow
  // memory and quarantine make that several times the ~12 MiB of a plain build).
  const auto alone_started = std::chrono::steady_clock::now();
  Process alone(run_args("alone.db"), dir.file("alone.log"));
  int code = 0;
  const int64_t alone_kib = peak_rss_kib_until_exit(alone, 60'000, &code);
  const double alone_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - alone_started).count();
  ASSERT_EQ(code, 0) << slurp(dir.file("alone.log"));

  FakeKvmon fake(mode);
  const auto started = std::chrono::steady_clock::now();
  std::vector<std::string> args = run_args("r.db");
  args.insert(args.end(), {"--monitor", "127.0.0.1:" + std::to_string(fake.port())});
  Process kvdrive(args, dir.file("kvdrive.log"));
  int64_t peak_kib = peak_rss_kib_until_exit(kvdrive, 60'000, &code);
  const double took_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const std::string out = slurp(dir.file("kvdrive.log"));
  std::cout << what << ": kvdrive peak VmRSS " << peak_kib << " KiB (" << alone_kib
            << " KiB without the link), run took " << took_s << " s (" << alone_s
            << " s without)\n";
  ASSERT_EQ(code, 0) << what << "\n" << out;
  // Before the bounds it grew by hundreds of MiB in seconds (686 MiB in 4 s).
  EXPECT_LT(peak_kib, alone_kib + 96 * 1024) << what;
  // The 3 s phase is not stretched, and the run ends without waiting on the peer (before the
  // bounds, 1,000 instances a tick kept the run going past 60 s): as long as the same run
  // without the link, twice over plus 6 s, and never under the 12 s it was (that fixed bound
  // failed under TSan at load 8: 12.4 s; the phase-length check below is the exact one).
  EXPECT_LT(took_s, std::max(12.0, 2 * alone_s + 6.0)) << what;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_LT(query_int(db, "SELECT MAX(ended_ts_us - started_ts_us) FROM phases"), 7'000'000)
      << what;
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM events WHERE kind = 'monitor_dropped' AND "
                      "source = 'kvdrive'"),
            1)
      << what << "\n"
      << out;
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM monitor_sessions WHERE status = 'failed'"), 1);
  EXPECT_NE(out.find("dropped"), std::string::npos) << out;  // the warning line
  EXPECT_EQ(fake.connections(), 1) << "a dropped peer is not reconnected";
}

TEST(KvdriveMonitor, APeerThatNeverSendsATickIsDroppedWithBoundedMemory) {
  expect_bounded_and_dropped(FakeKvmon::Mode::no_tick, "rows without a tick");
}

TEST(KvdriveMonitor, APeerAnnouncingThousandsOfProcessesIsDroppedAndTheRunEndsOnTime) {
  expect_bounded_and_dropped(FakeKvmon::Mode::instances, "1000 new instances a tick");
}

// A mixed phase of `duration` against `redis` with `fake` as its --monitor (and `more`), into
// dir/r.db: kvdrive's exit code and what it printed.
std::pair<int, std::string> run_beside(const FakeKvmon& fake, const StoreServer& redis,
                                       const TempDir& dir, const std::string& duration,
                                       const std::vector<std::string>& more = {}) {
  std::vector<std::string> args = {
      kKvdrive,    "run",       "--db",       dir.file("r.db"),
      "--target",  redis.uri(), "--keys",     "1000",
      "--phases",  "mixed",     "--duration", duration,
      "--threads", "1",         "--monitor",  "127.0.0.1:" + std::to_string(fake.port())};
  args.insert(args.end(), more.begin(), more.end());
  Process kvdrive(args, dir.file("kvdrive.log"));
  const int code = kvdrive.wait(60'000);
  return {code, slurp(dir.file("kvdrive.log"))};
}

// A peer whose clock or sample times are impossible (INT64_MIN as its time, a sample at
// INT64_MAX): refused, never stored (the offset overflowed and rows were written at ts about
// -9.2e18), and the run goes on without it.
TEST(KvdriveMonitor, APeerWithImpossibleTimesIsRefusedAndNothingOfItIsStored) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  for (auto mode : {FakeKvmon::Mode::bad_clock, FakeKvmon::Mode::bad_row_time}) {
    TempDir dir;
    FakeKvmon fake(mode);
    const auto [code, out] = run_beside(fake, redis, dir, "2s", {"--monitor-optional"});
    ASSERT_EQ(code, 0) << out;
    EXPECT_NE(out.find("impossible"), std::string::npos) << out;
    auto db = kv::open_results_db(dir.file("r.db"));
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM process_samples"), 0) << out;
    EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE ts_us < 946684800000000"), 0);
    EXPECT_GT(query_int(db, "SELECT SUM(ok) FROM driver_seconds"), 0);
    if (mode == FakeKvmon::Mode::bad_row_time) {
      EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'monitor_dropped'"), 1);
      EXPECT_EQ(fake.connections(), 1) << "a dropped peer is not reconnected";
    }
  }
}

// A peer that breaks every session right after subscribing (a line that never ends) is
// reconnected with a growing backoff, not every 100 ms (88 warnings in 8 s); one that sends
// 250 KB event lines is dropped at the first (they filled a results file at ~95 MB/s).
TEST(KvdriveMonitor, ABrokenPeerBacksOffAndAnEventFloodIsDropped) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  for (auto mode : {FakeKvmon::Mode::endless_line, FakeKvmon::Mode::big_events}) {
    TempDir dir;
    FakeKvmon fake(mode);
    const auto [code, out] = run_beside(fake, redis, dir, "4s");
    ASSERT_EQ(code, 0) << out;
    auto db = kv::open_results_db(dir.file("r.db"));
    if (mode == FakeKvmon::Mode::endless_line) {
      // 100, 200, 400, 800, 1600 ms ... : at most 6 sessions in the run's ~4.5 s.
      EXPECT_LE(fake.connections(), 7) << out;
      EXPECT_GE(fake.connections(), 2) << out;
    } else {
      EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'flood'"), 0);
      EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'monitor_dropped'"), 1);
      EXPECT_NE(out.find("an event whose message is"), std::string::npos) << out;
      EXPECT_EQ(fake.connections(), 1);
    }
    EXPECT_LT(std::filesystem::file_size(dir.file("r.db")), 8u << 20);
  }
}

// A peer whose every line is within the bounds but which sends far more bytes than any kvmon
// (4 MB a tick, as fast as kvdrive reads): dropped once past the byte bucket (80 MiB at once,
// 4 MiB/s after), where before it was read for the whole run.
TEST(KvdriveMonitor, APeerSendingMoreBytesThanAnyKvmonIsDropped) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  FakeKvmon fake(FakeKvmon::Mode::byte_flood);
  const auto [code, out] = run_beside(fake, redis, dir, "3s");
  ASSERT_EQ(code, 0) << out;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM events WHERE kind = 'monitor_dropped' AND "
                      "message LIKE '%MiB/s for long%'"),
            1)
      << out;
  EXPECT_EQ(fake.connections(), 1) << "a dropped peer is not reconnected";
  EXPECT_GT(query_int(db, "SELECT SUM(ok) FROM driver_seconds"), 0);
}

TEST(KvdriveMonitor, SigtermEndsARunPromptlyWhileAPeerFloods) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  for (auto mode : {FakeKvmon::Mode::no_tick, FakeKvmon::Mode::instances}) {
    TempDir dir;
    FakeKvmon fake(mode);
    Process kvdrive({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                     "1000", "--phases", "mixed", "--duration", "60s", "--threads", "1",
                     "--monitor", "127.0.0.1:" + std::to_string(fake.port())},
                    dir.file("kvdrive.log"));
    std::this_thread::sleep_for(std::chrono::milliseconds(2000));
    kvdrive.signal(SIGTERM);
    const auto signalled = std::chrono::steady_clock::now();
    int code = kvdrive.wait(30'000);
    const double took_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - signalled).count();
    EXPECT_NE(code, -1) << "kvdrive did not end after SIGTERM\n" << slurp(dir.file("kvdrive.log"));
    EXPECT_LT(took_s, 5.0) << slurp(dir.file("kvdrive.log"));  // before: still running at 30 s
  }
}

TEST(KvdriveMonitor, AShortTokenIsRefusedAndAReadableTokenFileWarns) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  int port = free_port();
  std::ofstream(dir.file("short")) << "x\n";  // a 1-byte token was accepted
  auto refused = run_kvdrive(
      dir, {"run", "--db", dir.file("r0.db"), "--target", redis.uri(), "--keys", "100", "--monitor",
            "127.0.0.1:" + std::to_string(port), "--monitor-token-file", dir.file("short")});
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("at least 16"), std::string::npos) << refused.output;
  EXPECT_EQ(std::count(refused.output.begin(), refused.output.end(), '\n'), 1) << refused.output;
  EXPECT_FALSE(std::filesystem::exists(dir.file("r0.db")));

  const std::string token = "0123456789abcdef-token";
  std::ofstream(dir.file("token")) << token << "\n";
  ::chmod(dir.file("token").c_str(), 0600);
  std::ofstream(dir.file("shared")) << token << "\n";
  ::chmod(dir.file("shared").c_str(), 0644);
  Process kvmon(
      {kKvmon, "--db", dir.file("kvmon.db"), "--pid", std::to_string(redis.pid()), "--interval",
       "200ms", "--listen", "127.0.0.1:" + std::to_string(port), "--token-file", dir.file("token")},
      dir.file("kvmon.log"));
  ASSERT_TRUE(accepts_within(port, 30'000)) << slurp(dir.file("kvmon.log"));
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "100", "--monitor",
            "127.0.0.1:" + std::to_string(port), "--monitor-token-file", dir.file("shared")});
  kvmon.signal(SIGTERM);
  EXPECT_EQ(kvmon.wait(10'000), 0);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("readable by anyone"), std::string::npos) << out.output;
  EXPECT_EQ(slurp(dir.file("kvmon.log")).find("readable by"), std::string::npos);  // its is 0600
}

}  // namespace
