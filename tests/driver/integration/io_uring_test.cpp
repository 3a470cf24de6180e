// --io uring against a real redis-server: every request counted as Redis counts it, every reply
// read with the kernel's receive stamp (the latency split as on epoll), connections handed from
// phase to phase as on epoll, and the choice in the run's parameters. (memcached on both
// transports: memcached_pipeline_test.cpp; Ctrl-C: kvdrive_faults_test.cpp.)
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <csignal>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/io_mode.hpp"
#include "kvdrive_test_util.hpp"
#include "redis_cluster.hpp"

namespace {
using namespace kv::test;

long long connections_received(const StoreServer& redis) {
  return stat_value(redis_info(redis.port(), "stats"), "total_connections_received");
}

TEST(IoUring, RedisCountsAsTheServerAndEveryReplyIsStampedAsOnEpoll) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  // Values up to 20 KB: a reply can span two of the ring's 16 KiB receive buffers.
  const auto run = [&](const std::string& io) {
    return run_kvdrive(dir, {"run",
                             "--db",
                             dir.file("r.db"),
                             "--target",
                             redis.uri(),
                             "--io",
                             io,
                             "--keys",
                             "3000",
                             "--threads",
                             "2",
                             "--connections",
                             "3",
                             "--pipeline",
                             "16",
                             "--phases",
                             "load,read,mixed",
                             "--ratio",
                             "1:3",
                             "--requests",
                             "20000",
                             "--hit-rate",
                             "0.7",
                             "--verify",
                             "--value-size",
                             "10-20000",
                             "--key-pattern",
                             "uniform"});
  };
  const long long before = connections_received(redis);
  auto out = run("uring");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  const long long uring_connections = connections_received(redis) - before;
  {
    auto db = kv::open_results_db(dir.file("r.db"));
    const std::string stats = redis_info(redis.port(), "stats");
    EXPECT_EQ(redis_command_calls(redis.port(), "set"), driver_sum(db, "ops", "redis", "set"));
    EXPECT_EQ(redis_command_calls(redis.port(), "get"), driver_sum(db, "ops", "redis", "get"));
    EXPECT_EQ(stat_value(stats, "keyspace_hits"), driver_sum(db, "hits", "redis", "get"));
    EXPECT_EQ(stat_value(stats, "keyspace_misses"), driver_sum(db, "misses", "redis", "get"));
    EXPECT_EQ(driver_sum(db, "ops", "redis", "get", "read"), 20000);
    EXPECT_EQ(driver_sum(db, "wrong", "redis", "get"), 0);  // every value read byte for byte
    EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors + timeouts), 0) FROM driver_seconds"), 0);
    EXPECT_EQ(query_int(db, "SELECT count(*) FROM runs WHERE parameters LIKE '%\"io\":\"uring\"%'"),
              1);
    // Every answered read left at a known time and its reply carried the kernel's stamp (but for
    // the first replies, should the kernel turn host-wide stamping on only after them).
    const int64_t ok = query_int(db,
                                 "SELECT SUM(d.ok) FROM driver_seconds d JOIN phases p USING "
                                 "(phase_id) WHERE p.kind = 'read' AND d.op = 'get'");
    const auto part_count = [&](const std::string& name) {
      return query_int(db,
                       "SELECT x.count FROM phase_part_percentiles x JOIN phases p USING "
                       "(phase_id) WHERE p.kind = 'read' AND x.op = 'get' AND x.part = '" +
                           name + "'");
    };
    EXPECT_EQ(part_count("client_send"), ok);
    EXPECT_GE(static_cast<double>(part_count("wire")), static_cast<double>(ok) * 0.99);
    EXPECT_LE(part_count("wire"), ok);
  }
  // The same run on epoll opens as many connections: each phase takes over the last one's.
  const long long mid = connections_received(redis);
  out = run("epoll");
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_EQ(uring_connections, connections_received(redis) - mid);
  EXPECT_LT(uring_connections, 3 * 6) << "a connection per phase: none was handed on";
}

// --io auto (the default) is uring exactly where the kernel can run it, and epoll where a step
// needs epoll (--wire-start kernel): the run's parameters say which it was.
TEST(IoUring, AutoIsUringWhereTheKernelCanAndEpollWithWireStartKernel) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string expected = kv::drive::io_uring_refusal().empty() ? "uring" : "epoll";
  for (const bool kernel : {false, true}) {
    std::vector<std::string> args = {"run",    "--db", dir.file("r.db"), "--target", redis.uri(),
                                     "--keys", "500",  "--threads",      "1"};
    if (kernel) args.insert(args.end(), {"--wire-start", "kernel"});
    auto out = run_kvdrive(dir, args);
    ASSERT_EQ(out.exit_code, 0) << out.output;
  }
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_text(db, "SELECT json_extract(parameters, '$.io') FROM runs WHERE run_id = 1"),
            expected);
  EXPECT_EQ(query_text(db, "SELECT json_extract(parameters, '$.io') FROM runs WHERE run_id = 2"),
            "epoll");
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), 1000);
}

// Process `pid`'s descriptors and what each names ("socket:[123]", "anon_inode:[io_uring]").
std::map<std::string, std::string> fd_links(pid_t pid) {
  std::map<std::string, std::string> links;
  const std::string fd_dir = "/proc/" + std::to_string(pid) + "/fd";
  DIR* d = ::opendir(fd_dir.c_str());
  if (d == nullptr) return links;
  while (dirent* e = ::readdir(d)) {
    std::array<char, 256> link{};
    const ssize_t n = ::readlink((fd_dir + "/" + e->d_name).c_str(), link.data(), link.size() - 1);
    if (n > 0) links[e->d_name] = std::string(link.data(), static_cast<size_t>(n));
  }
  ::closedir(d);
  return links;
}

// Each io_uring descriptor of process `pid` (a ring's dup'd descriptor as well) with the
// sockets its file table holds, as /proc/PID/fdinfo lists them ("    3: socket:[123]").
std::map<std::string, std::vector<std::string>> ring_tables(pid_t pid) {
  std::map<std::string, std::vector<std::string>> rings;
  for (const auto& [fd, target] : fd_links(pid)) {
    if (target != "anon_inode:[io_uring]") continue;
    std::ifstream info("/proc/" + std::to_string(pid) + "/fdinfo/" + fd);
    std::string line;
    bool in_table = false;
    std::vector<std::string>& table = rings[fd];
    while (std::getline(info, line)) {
      if (line.starts_with("UserFiles:")) {
        in_table = true;
        continue;
      }
      if (!in_table) continue;
      const size_t colon = line.find(": ");
      if (line.empty() || line[0] != ' ' || colon == std::string::npos) break;
      table.push_back(line.substr(colon + 2));
    }
  }
  return rings;
}

std::set<std::string> open_sockets(pid_t pid) {
  std::set<std::string> sockets;
  for (const auto& [fd, target] : fd_links(pid))
    if (target.starts_with("socket:")) sockets.insert(target);
  return sockets;
}

// Registered files: while a run reads, each worker's ring holds exactly its connections' sockets
// in its file table, also after Redis closed them all and kvdrive connected again; once Redis is
// gone for good, none (a closed socket the table kept would stay open, in CLOSE_WAIT, until the
// phase ends).
TEST(IoUring, EachRingsFileTableHoldsExactlyItsConnectionsSockets) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  if (!kv::drive::io_uring_refusal().empty()) GTEST_SKIP() << kv::drive::io_uring_refusal();
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  const std::string db_path = dir.file("r.db");
  Process p({kKvdrive, "run",    "--db",      db_path,    "--target",      redis.uri(),  "--io",
             "uring",  "--keys", "2000",      "--phases", "load,read",     "--duration", "60s",
             "--rate", "2000",   "--threads", "2",        "--connections", "3"},
            log);
  ASSERT_TRUE(wait_for_value(db_path, phase_rows_at_least("read", 1), 60'000)) << slurp(log);
  // Each ring is read through both of its descriptors (its own and the copy Asio watches), so
  // each socket in a table is listed twice. Read again until what is listed holds (a reconnect
  // may be under way), for up to 5 s.
  const auto tables_hold = [&](size_t sockets) -> std::string {
    std::string why;
    for (int i = 0; i < 50; ++i) {
      const auto rings = ring_tables(p.pid());
      const std::set<std::string> open = open_sockets(p.pid());
      std::map<std::string, int> listed;
      for (const auto& [fd, table] : rings)
        for (const std::string& s : table) ++listed[s];
      why.clear();
      if (rings.size() != 4) why = std::to_string(rings.size()) + " ring descriptors, not 4";
      if (listed.size() != sockets)
        why = std::to_string(listed.size()) + " sockets in the tables, not " +
              std::to_string(sockets);
      for (const auto& [s, n] : listed) {
        if (n != 2) why = s + " is listed " + std::to_string(n) + " times, not twice";
        if (!open.contains(s)) why = s + " is not a socket kvdrive has open";
      }
      if (why.empty()) return why;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return why;
  };
  EXPECT_EQ(tables_hold(6), "") << "reading";
  const auto connections = [&] {
    return stat_value(redis_info(redis.port(), "stats"), "total_connections_received");
  };
  const long long before = connections();
  redis_command(redis.port(), {"CLIENT", "KILL", "TYPE", "normal"});
  for (int i = 0; i < 200 && connections() < before + 6; ++i)  // kvdrive connects again
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(tables_hold(6), "")
      << "after Redis closed every connection and kvdrive made them again";
  redis.process().signal(SIGKILL);
  EXPECT_EQ(tables_hold(0), "") << "after Redis was killed";
  p.signal(SIGINT);
  EXPECT_EQ(p.wait(30'000), 130) << slurp(log);
}

TEST(IoUring, TwoThousandReadableSocketsOnOneThreadEachFindABuffer) {
  // One thread, 2,000 connections in a closed loop on memcached: at any reap, up to 2,000
  // sockets may hold replies. With fewer provided buffers than that (256 once), each socket past
  // them ended its receive with -ENOBUFS, was armed again and ended again, pass after pass:
  // 89 % of the receive completions at 8,000 connections. The worker says at debug level how
  // many receives waited for a buffer.
  if (!kv::drive::io_uring_refusal().empty()) GTEST_SKIP() << kv::drive::io_uring_refusal();
  const uint64_t fds = raise_fd_limit();  // kvdrive (and memcached) inherit it
  if (fds < 2200) GTEST_SKIP() << "fd limit " << fds << " is below 2200";
  StoreServer memcached(StoreServer::Kind::memcached, {"-c", "3000"});
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("m.db"), "--target", memcached.uri(), "--io",
                        "uring", "--keys", "5000", "--phases", "load,read", "--duration", "2s",
                        "--threads", "1", "--connections", "2000", "--log-level", "debug"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("m.db"));
  const long long gets = driver_sum(db, "ops", "memcached", "get");
  EXPECT_GT(gets, 10'000) << out.output;
  EXPECT_EQ(driver_sum(db, "errors", "memcached", "get"), 0);
  long long waited = 0;
  for (size_t at = out.output.find(" receives waited for a free buffer"); at != std::string::npos;
       at = out.output.find(" receives waited for a free buffer", at + 1)) {
    const size_t start = out.output.rfind(' ', at - 1) + 1;
    waited += std::stoll(out.output.substr(start, at - start));
  }
  // A few may, at a socket's first replies; a storm is many per request.
  EXPECT_LT(waited, gets / 100) << waited << " receives waited for a buffer, " << gets << " gets";
}

}  // namespace
