// Integration tests of kvmon --listen: the real kvmon binary, real sockets, the protocol of
// docs/protocol.md spoken by a small blocking test client.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "db_query.hpp"
#include "kvbench/clock.hpp"
#include "kvbench/protocol.hpp"
#include "kvbench/sqlite.hpp"
#include "kvmon_process.hpp"
#include "servers.hpp"

namespace kv::mon {
namespace {

using kv::test::Process;
using kv::test::query_int;
using kv::test::slurp;
using kv::test::StoreServer;
using kv::test::TempDir;
using proto::Message;

const std::string kKvmon = std::string(KV_BINARY_DIR) + "/monitor/kvmon";

// A blocking protocol client for tests. recv_buf > 0 shrinks SO_RCVBUF (a client that never
// reads then fills up quickly).
class TestClient {
 public:
  explicit TestClient(int port, int recv_buf = 0) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (recv_buf > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &recv_buf, sizeof recv_buf);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    for (int i = 0; i < 200; ++i) {  // kvmon may still be starting
      if (connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return;
      close(fd_);
      fd_ = socket(AF_INET, SOCK_STREAM, 0);
      if (recv_buf > 0) setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &recv_buf, sizeof recv_buf);
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ADD_FAILURE() << "cannot connect to port " << port;
  }
  ~TestClient() { close(fd_); }
  void send(const std::string& bytes) {
    ASSERT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  void send(const Message& m) { send(proto::encode(m)); }
  // The next message; nullopt on EOF or after timeout_ms.
  std::optional<Message> next(int timeout_ms = 3000) {
    std::string line;
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (framer_.next(&line) != proto::LineFramer::Status::line) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          end - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || poll(&p, 1, static_cast<int>(left.count())) <= 0) return {};
      char buf[65536];
      ssize_t n = recv(fd_, buf, sizeof buf, 0);
      if (n <= 0) return {};
      framer_.feed(std::string_view(buf, static_cast<size_t>(n)));
    }
    auto m = proto::parse_message(line);
    EXPECT_TRUE(m.ok()) << line;
    return m.ok() ? std::optional<Message>(m.value()) : std::nullopt;
  }
  // Skips messages until one with `verb`.
  std::optional<Message> until(const std::string& verb, int timeout_ms = 3000) {
    while (auto m = next(timeout_ms)) {
      if (m->verb == verb) return m;
    }
    return {};
  }
  bool closed_by_peer(int timeout_ms = 3000) {
    while (auto m = next(timeout_ms)) {
    }
    pollfd p{fd_, POLLIN, 0};
    char c;
    return poll(&p, 1, 0) == 1 && recv(fd_, &c, 1, 0) == 0;
  }
  void hello(const std::string& token = "") {
    Message h("hello");
    h.add("v", 1);
    if (!token.empty()) h.add("token", token);
    send(h);
  }

 private:
  int fd_ = -1;
  proto::LineFramer framer_{proto::kMaxReplyBytes};
};

using Kvmon = kv::test::KvmonProcess;

TEST(KvmonServer, SubscriberGetsTicksAtItsIntervalAndTimeIsNow) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  Kvmon kvmon;
  kvmon.start(
      {"--pid", std::to_string(redis.pid()), "--interval", "50ms", "--host-interval", "100ms"});
  TestClient c(kvmon.port);
  c.hello();
  auto hello = c.until("hello");
  ASSERT_TRUE(hello) << kvmon.log();
  EXPECT_EQ(hello->get_int("interval_us"), 50'000);
  c.send("time id=7\n");
  int64_t before = now_ts_us();
  auto t = c.until("time");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->get_int("id"), 7);
  EXPECT_NEAR(static_cast<double>(t->get_int("now_ts_us").value_or(0)), static_cast<double>(before),
              50'000.0);

  c.send("subscribe interval_us=100000\n");
  ASSERT_TRUE(c.until("subscribed"));
  std::vector<int64_t> ticks;
  int procs = 0, hosts = 0, instances = 0;
  while (ticks.size() < 8) {
    auto m = c.next();
    ASSERT_TRUE(m) << "stream stopped\n" << kvmon.log();
    if (m->verb == "tick") ticks.push_back(*m->get_int("scheduled_ts_us"));
    if (m->verb == "proc") {
      ++procs;
      EXPECT_EQ(m->get_int("pid"), redis.pid());
      EXPECT_GT(m->get_int("rss_kib").value_or(0), 0);
    }
    if (m->verb == "host") ++hosts;
    if (m->verb == "instance") ++instances;
  }
  for (size_t i = 1; i < ticks.size(); ++i) EXPECT_EQ(ticks[i] - ticks[i - 1], 100'000);
  EXPECT_EQ(procs, 8);
  EXPECT_EQ(hosts, 8);
  EXPECT_EQ(instances, 1) << "the instance is announced once, before its first sample";
}

TEST(KvmonServer, ASubscriberAtTheHostIntervalGetsEveryHostSample) {
  Kvmon kvmon;
  kvmon.start({"--interval", "100ms"});  // the host every 1 s by default
  TestClient c(kvmon.port);
  c.hello();
  auto hello = c.until("hello");
  ASSERT_TRUE(hello) << kvmon.log();
  EXPECT_EQ(hello->get_int("host_interval_us"), 1'000'000);
  c.send("subscribe interval_us=1000000\n");
  ASSERT_TRUE(c.until("subscribed"));
  int ticks = 0, hosts_in_tick = 0;
  std::vector<int64_t> host_ts;
  while (ticks < 3) {
    auto m = c.next();
    ASSERT_TRUE(m) << "stream stopped\n" << kvmon.log();
    if (m->verb == "host") {
      ++hosts_in_tick;
      host_ts.push_back(*m->get_int("scheduled_ts_us"));
    }
    if (m->verb == "tick") {
      EXPECT_EQ(hosts_in_tick, 1) << "tick " << ticks << " has no host line";
      hosts_in_tick = 0;
      ++ticks;
    }
  }
  ASSERT_EQ(host_ts.size(), 3u);
  for (size_t i = 1; i < host_ts.size(); ++i) EXPECT_EQ(host_ts[i] - host_ts[i - 1], 1'000'000);
}

// What `history since_ts_us=0` returns from a kvmon started with `args`, asked after wait_ms.
struct Backfill {
  std::optional<Message> begin, end;
  std::vector<int64_t> ticks;  // scheduled_ts_us of each tick line
};
Backfill backfill(std::vector<std::string> args, int wait_ms) {
  Kvmon kvmon;
  kvmon.start(std::move(args));
  TestClient c(kvmon.port);
  c.hello();
  Backfill r;
  if (!c.until("hello")) return r;
  std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms));
  c.send("history since_ts_us=0\n");
  r.begin = c.until("history_begin");
  if (!r.begin) return r;
  while ((r.end = c.next()) && r.end->verb != "history_end") {
    if (r.end->verb == "tick") r.ticks.push_back(*r.end->get_int("scheduled_ts_us"));
  }
  return r;
}

TEST(KvmonServer, HistoryBackfillsWhatWasMissed) {
  Backfill h = backfill({"--interval", "20ms"}, 500);
  ASSERT_TRUE(h.begin);
  ASSERT_TRUE(h.end) << "no history_end";
  ASSERT_GE(h.ticks.size(), 15u);
  EXPECT_EQ(h.ticks.front(), h.begin->get_int("oldest_ts_us"));
  EXPECT_EQ(h.end->get_int("last_ts_us"), h.ticks.back());
  // Every tick on the 20 ms grid, in order. A tick kvmon skipped because it fell behind (under
  // a sanitizer on a loaded machine) was never sampled, so it cannot be in the history: a gap
  // of whole intervals, and only a few of them.
  size_t skips = 0;
  for (size_t i = 1; i < h.ticks.size(); ++i) {
    const int64_t gap = h.ticks[i] - h.ticks[i - 1];
    EXPECT_TRUE(gap > 0 && gap % 20'000 == 0) << "tick " << i << ": gap " << gap;
    if (gap != 20'000) ++skips;
  }
  EXPECT_LE(skips * 10, h.ticks.size()) << "more than a tenth of the ticks skipped";
}

// --history bounds how far back a client can backfill (and so kvmon's memory): with 1 s of
// history at 20 ms, a client arriving after 2 s finds only the last second or so.
TEST(KvmonServer, HistoryOptionBoundsTheBackfill) {
  Backfill h = backfill({"--interval", "20ms", "--history", "1s"}, 2000);
  ASSERT_TRUE(h.begin);
  ASSERT_TRUE(h.end) << "no history_end";
  ASSERT_FALSE(h.ticks.empty());
  // The oldest kept tick is at most 1 s (plus the tick being added) older than the newest.
  EXPECT_LE(h.ticks.back() - h.ticks.front(), 1'000'000 + 20'000);
  EXPECT_GE(h.ticks.back() - h.ticks.front(), 900'000);
  EXPECT_LE(h.ticks.size(), 52u);
  EXPECT_EQ(h.ticks.front(), h.begin->get_int("oldest_ts_us"));
}

TEST(KvmonServer, ClientThatNeverReadsIsDroppedWhileSamplingStaysOnSchedule) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  Kvmon kvmon;
  kvmon.start(
      {"--pid", std::to_string(redis.pid()), "--interval", "20ms", "--client-queue", "32KiB"});
  TestClient reader(kvmon.port);
  reader.hello();
  reader.send("subscribe\n");
  ASSERT_TRUE(reader.until("subscribed")) << kvmon.log();
  TestClient stuck(kvmon.port, 4096);
  stuck.hello();
  stuck.send("subscribe\n");  // and never read again
  std::string db = kvmon.db();
  auto dropped = [&] {
    return query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'client_dropped'") > 0;
  };
  auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  int reader_ticks = 0;
  while (!dropped() && std::chrono::steady_clock::now() < end) {
    auto slice = std::chrono::steady_clock::now() + std::chrono::milliseconds(100);
    while (std::chrono::steady_clock::now() < slice) {  // the other client keeps being served
      if (auto m = reader.next(50); m && m->verb == "tick") ++reader_ticks;
    }
  }
  ASSERT_TRUE(dropped()) << kvmon.log();
  EXPECT_GT(reader_ticks, 0);
  EXPECT_TRUE(reader.until("tick")) << "the reading client was not served after the drop";
  EXPECT_NE(kvmon.log().find("dropped"), std::string::npos);
  // Sampling never waited for the stuck client (a blocking write would have stopped it for
  // good): samples kept coming on schedule before and after the drop. The bounds leave room
  // for a loaded test machine; the run's figures are printed.
  int64_t drop_ts = query_int(db, "SELECT MIN(ts_us) FROM events WHERE kind = 'client_dropped'");
  int64_t n = query_int(db, "SELECT COUNT(*) FROM process_samples");
  int64_t late = query_int(db, "SELECT MAX(ts_us - scheduled_ts_us) FROM process_samples");
  int64_t span = query_int(db,
                           "SELECT MAX(scheduled_ts_us) - MIN(scheduled_ts_us) "
                           "FROM process_samples");
  int64_t max_gap = query_int(db,
                              "SELECT MAX(gap) FROM (SELECT scheduled_ts_us - LAG("
                              "scheduled_ts_us) OVER (ORDER BY scheduled_ts_us) AS gap "
                              "FROM process_samples)");
  std::cout << "samples " << n << " over " << span / 1000 << " ms (expected " << span / 20'000 + 1
            << "), max lateness " << late << " us, max gap " << max_gap << " us\n";
  auto after_drop = [&] {
    return query_int(db, "SELECT COUNT(*) FROM process_samples WHERE scheduled_ts_us > " +
                             std::to_string(drop_ts));
  };
  for (int i = 0; i < 100 && after_drop() <= 10; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  EXPECT_GT(after_drop(), 10) << "sampling stopped after the drop";
  EXPECT_LT(late, 200'000);
  EXPECT_LT(max_gap, 300'000);
  EXPECT_GT(n, (span / 20'000 + 1) * 9 / 10) << "more than 10 % of the ticks were skipped";
}

TEST(KvmonServer, MalformedInputGetsAnErrorAndTheDaemonServesOthers) {
  Kvmon kvmon;
  kvmon.start({"--interval", "20ms"});
  TestClient good(kvmon.port);
  good.hello();
  good.send("subscribe\n");
  ASSERT_TRUE(good.until("subscribed")) << kvmon.log();

  for (const std::string& bad :
       {std::string("hello v=1\nsubscribe interval_us=abc\n"), std::string("hello v=1\nTIME\n"),
        std::string("hello v=1\nfrobnicate\n"),
        std::string("hello v=1\n") + std::string(5000, 'x')}) {
    TestClient c(kvmon.port);
    c.send(bad);
    auto err = c.until("error");
    ASSERT_TRUE(err) << bad.substr(0, 40);
    EXPECT_FALSE(err->get_text("code").empty());
    EXPECT_FALSE(err->get_text("msg").empty());
    EXPECT_TRUE(c.closed_by_peer()) << "connection left open after " << err->get_text("code");
  }
  TestClient too_long(kvmon.port);
  too_long.send(std::string(5000, 'x'));
  auto err = too_long.until("error");
  ASSERT_TRUE(err);
  EXPECT_EQ(err->get_text("code"), "too_long");

  EXPECT_TRUE(good.until("tick")) << "the well-behaved client stopped getting ticks";
  TestClient later(kvmon.port);
  later.hello();
  EXPECT_TRUE(later.until("hello"));
  kvmon.proc.signal(SIGTERM);
  EXPECT_EQ(kvmon.proc.wait(10'000), 0) << kvmon.log();
}

TEST(KvmonServer, NonLoopbackListenWithoutTokenFileExits2) {
  TempDir dir;
  Process p({kKvmon, "--db", dir.file("r.db"), "--listen", "0.0.0.0:7070"}, dir.file("log"));
  EXPECT_EQ(p.wait(10'000), 2);
  std::string log = slurp(dir.file("log"));
  EXPECT_NE(log.find("needs --token-file"), std::string::npos) << log;
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << "one clear line:\n" << log;
}

TEST(KvmonServer, WrongTokenIsRefusedRightTokenIsServed) {
  Kvmon kvmon;
  { std::ofstream(kvmon.dir.file("token")) << "s3cret-token-0123456789\n"; }
  kvmon.proc =
      Process({kKvmon, "--db", kvmon.db(), "--listen", "0.0.0.0:" + std::to_string(kvmon.port),
               "--token-file", kvmon.dir.file("token"), "--max-clients", "1"},
              kvmon.dir.file("kvmon.log"));
  for (const std::string& token : {std::string(""), std::string("s3cret-token-012345678N"),
                                   std::string("s3cret-token-01234567892")}) {
    TestClient c(kvmon.port);
    c.hello(token);
    auto err = c.until("error");
    ASSERT_TRUE(err) << kvmon.log();
    EXPECT_EQ(err->get_text("code"), "auth");
    EXPECT_TRUE(c.closed_by_peer());
  }
  TestClient skip_hello(kvmon.port);
  skip_hello.send("time\n");
  auto err = skip_hello.until("error");
  ASSERT_TRUE(err);
  EXPECT_EQ(err->get_text("code"), "auth");
  EXPECT_TRUE(skip_hello.closed_by_peer());

  TestClient ok(kvmon.port);
  ok.hello("s3cret-token-0123456789");
  ASSERT_TRUE(ok.until("hello")) << kvmon.log();
  TestClient second(kvmon.port);  // --max-clients 1
  auto busy = second.until("error");
  ASSERT_TRUE(busy);
  EXPECT_EQ(busy->get_text("code"), "busy");
}

// A brute force from one address: after 3 free failures each one shuts the address out (1 s,
// doubling), so guesses are a handful, not thousands a second; the log has a summary line, not
// one line per attempt. Before: 8-9k guesses/s and 31 MB of log in 20 s.
TEST(KvmonServer, FailedTokensAreRateLimitedPerAddressAndLoggedInSummary) {
  Kvmon kvmon;
  const std::string token = "s3cret-token-0123456789";
  { std::ofstream(kvmon.dir.file("token")) << token << "\n"; }
  ::chmod(kvmon.dir.file("token").c_str(), 0600);
  kvmon.proc =
      Process({kKvmon, "--db", kvmon.db(), "--listen", "127.0.0.1:" + std::to_string(kvmon.port),
               "--token-file", kvmon.dir.file("token"), "--interval", "100ms"},
              kvmon.dir.file("kvmon.log"));
  int checked = 0, refused = 0, attempts = 0;
  const auto start = std::chrono::steady_clock::now();
  const auto end = start + std::chrono::milliseconds(2500);
  while (std::chrono::steady_clock::now() < end) {
    TestClient c(kvmon.port);
    c.hello("wrong-token-" + std::to_string(attempts++) + "-0123456789");
    auto err = c.until("error");
    ASSERT_TRUE(err) << kvmon.log();
    ASSERT_EQ(err->get_text("code"), "auth");
    if (err->get_text("msg") == "wrong or missing token") {
      ++checked;
    } else {
      EXPECT_NE(err->get_text("msg").find("too many failed attempts"), std::string::npos);
      ++refused;
    }
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << attempts << " attempts in " << secs << " s: " << checked << " tokens checked ("
            << checked / secs << " guesses/s), " << refused << " refused unchecked\n";
  // 3 free, the 4th shuts it out for 1 s, the 5th (after 1 s) for 2 s: at most 5 in 2.5 s.
  EXPECT_LE(checked, 5);
  EXPECT_GE(checked, 4);
  EXPECT_GT(refused, 0);
  // Shut out: even the right token is not looked at now.
  TestClient right(kvmon.port);
  right.hello(token);
  auto err = right.until("error");
  ASSERT_TRUE(err) << kvmon.log();
  EXPECT_NE(err->get_text("msg").find("retry in"), std::string::npos);
  kvmon.proc.signal(SIGTERM);
  EXPECT_EQ(kvmon.proc.wait(10'000), 0);
  // One line at the first failure and a summary at the end, not one per attempt.
  const std::string log = kvmon.log();
  std::istringstream in(log);
  std::string line;
  size_t auth_lines = 0;
  while (std::getline(in, line)) {
    if (line.find("token") != std::string::npos || line.find("refused") != std::string::npos)
      ++auth_lines;
  }
  EXPECT_LE(auth_lines, 3u) << log;
  EXPECT_NE(log.find("wrong or missing tokens and"), std::string::npos) << "no summary line\n"
                                                                        << log;
}

// A client flooding kvmon with garbage, before hello and after (no token: anyone may say
// hello): each refusal is answered, but the log has one line per address and 10 s and a summary
// of the rest. Before: 55,994 log lines in 5 s from `printf 'bogus\n' | nc` in a loop.
TEST(KvmonServer, RefusedClientsAreLoggedOncePerAddressAndSummarised) {
  Kvmon kvmon;
  kvmon.start({"--interval", "100ms"});
  int answered = 0;
  for (int i = 0; i < 300; ++i) {
    TestClient c(kvmon.port);
    c.send(i % 2 == 0 ? "bogus\n" : "hello v=1\nbogus\n");
    if (c.until("error")) ++answered;
  }
  EXPECT_EQ(answered, 300);
  kvmon.proc.signal(SIGTERM);
  EXPECT_EQ(kvmon.proc.wait(10'000), 0);
  const std::string log = kvmon.log();
  std::istringstream in(log);
  size_t refused_lines = 0;
  for (std::string line; std::getline(in, line);)
    if (line.find("refused") != std::string::npos) ++refused_lines;
  EXPECT_LE(refused_lines, 3u) << log;
  EXPECT_NE(log.find("client 127.0.0.1:"), std::string::npos) << "the first is named\n" << log;
  EXPECT_NE(log.find("more refused in the last"), std::string::npos) << "no summary line\n" << log;
}

TEST(KvmonServer, ASilentClientHoldsAPlaceForFiveSecondsNotTheIdleTimeout) {
  Kvmon kvmon;
  kvmon.start({"--interval", "100ms", "--max-clients", "2", "--idle-timeout", "60s"});
  TestClient first(kvmon.port), second(kvmon.port);  // connect, send nothing
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  {
    TestClient third(kvmon.port);  // both places are taken
    third.hello();
    auto m = third.until("error");
    ASSERT_TRUE(m);
    EXPECT_EQ(*m->find("code"), proto::kErrBusy);
  }
  const auto start = std::chrono::steady_clock::now();
  auto m = first.until("error", 8000);
  ASSERT_TRUE(m) << "a silent client was not closed within 8 s";
  EXPECT_EQ(*m->find("code"), proto::kErrIdle);
  EXPECT_NE(m->find("msg")->find("hello"), std::string::npos);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(7));
  EXPECT_TRUE(second.until("error", 3000));
  TestClient fourth(kvmon.port);  // served now
  fourth.hello();
  EXPECT_TRUE(fourth.until("hello"));
}

TEST(KvmonServer, AShortTokenIsRefusedAndAReadableTokenFileWarns) {
  Kvmon kvmon;
  std::ofstream(kvmon.dir.file("short")) << "123456789012345\n";  // 15 bytes
  Process refused(
      {kKvmon, "--db", kvmon.db(), "--listen", "127.0.0.1:" + std::to_string(kvmon.port),
       "--token-file", kvmon.dir.file("short")},
      kvmon.dir.file("short.log"));
  EXPECT_EQ(refused.wait(10'000), 2);
  std::string out = slurp(kvmon.dir.file("short.log"));
  EXPECT_NE(out.find("at least 16"), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  for (mode_t mode : {0600, 0640, 0644}) {
    std::ofstream(kvmon.dir.file("token")) << "s3cret-token-0123456789\n";
    ::chmod(kvmon.dir.file("token").c_str(), mode);
    Process p({kKvmon, "--db", kvmon.db(), "--listen", "127.0.0.1:" + std::to_string(kvmon.port),
               "--token-file", kvmon.dir.file("token")},
              kvmon.dir.file("mode.log"));
    TestClient c(kvmon.port);
    c.hello("s3cret-token-0123456789");
    ASSERT_TRUE(c.until("hello"));
    p.signal(SIGTERM);
    EXPECT_EQ(p.wait(10'000), 0);
    std::string log = slurp(kvmon.dir.file("mode.log"));
    const char* want = mode == 0644   ? "readable by anyone"
                       : mode == 0640 ? "readable by its group"
                                      : nullptr;
    if (want) {
      EXPECT_NE(log.find(want), std::string::npos) << log;
    } else {
      EXPECT_EQ(log.find("readable by"), std::string::npos) << log;
    }
  }
}

}  // namespace
}  // namespace kv::mon
