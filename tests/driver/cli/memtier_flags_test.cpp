// #19's everyday habits, run through the real kvdrive against the fake store: memtier_benchmark's
// flags where they mean what kvdrive's own do, --log-level after the subcommand, and a --help
// whose types and defaults say something.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "../integration/kvdrive_test_util.hpp"
#include "db_query.hpp"
#include "fake_store.hpp"

namespace {
using namespace kv::test;

std::string phase_shape(const std::string& db) {
  kv::Database d = kv::open_results_db(db);
  return query_text(d,
                    "SELECT group_concat(kind || ' ' || threads || ' ' || connections || ' ' || "
                    "COALESCE(duration_us, -1) || ' ' || COALESCE(parameters, ''), ';') "
                    "FROM (SELECT * FROM phases ORDER BY phase_id)");
}

// With --phases the memtier flags are aliases of kvdrive's own: the same run spelled with
// kvdrive's options and with memtier's gives the same phases.
TEST(MemtierFlags, WithPhasesTheyMeanWhatKvdrivesOwnMean) {
  FakeStore store;
  TempDir dir;
  const std::string port = std::to_string(store.port());
  const std::vector<std::string> common = {"--phases", "mixed", "--keys",     "200",
                                           "--ratio",  "1:1",   "--pipeline", "2"};
  std::vector<std::string> own = {"run",
                                  "--db",
                                  dir.file("own.db"),
                                  "--target",
                                  "redis://127.0.0.1:" + port,
                                  "--threads",
                                  "2",
                                  "--connections",
                                  "3",
                                  "--value-size",
                                  "64",
                                  "--duration",
                                  "1"};
  std::vector<std::string> memtier = {"run",         "--db",      dir.file("memtier.db"),
                                      "-s",          "127.0.0.1", "-p",
                                      port,          "-P",        "redis",
                                      "-t",          "2",         "-c",
                                      "3",           "-d",        "64",
                                      "--test-time", "1",         "-a",
                                      "s3cret-pw"};
  own.insert(own.end(), common.begin(), common.end());
  memtier.insert(memtier.end(), common.begin(), common.end());
  auto a = run_kvdrive(dir, own);
  ASSERT_EQ(a.exit_code, 0) << a.output;
  auto b = run_kvdrive(dir, memtier);
  ASSERT_EQ(b.exit_code, 0) << b.output;
  EXPECT_NE(phase_shape(dir.file("own.db")), "");
  EXPECT_EQ(phase_shape(dir.file("own.db")), phase_shape(dir.file("memtier.db")));
  kv::Database m = kv::open_results_db(dir.file("memtier.db"));
  EXPECT_EQ(query_text(m, "SELECT protocol FROM targets"), "redis");
  // -a's password is neither in the stored command line nor in the target's URI.
  const std::string stored = query_text(m, "SELECT command_line || ' ' || uri FROM runs, targets");
  EXPECT_EQ(stored.find("s3cret-pw"), std::string::npos) << stored;
  EXPECT_NE(stored.find("***"), std::string::npos) << stored;
}

TEST(MemtierFlags, ProtocolNamesMapToTargets) {
  FakeStore store;
  TempDir dir;
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "-p", std::to_string(store.port()), "-P",
                        "memcache_binary", "-s", "127.0.0.1", "--keys", "50", "--phases", "load"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  kv::Database db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_text(db, "SELECT protocol || ' ' || uri FROM targets"),
            "memcached memcached://127.0.0.1:" + std::to_string(store.port()) + "?protocol=binary");
  // Refused: what memtier takes but kvdrive does not, each in one line, exit 2.
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"-P", "resp3"}, "invalid --protocol 'resp3'"},
           {{"-P", "memcache_text", "-a", "pw"}, "memcached targets take no password"},
           {{"-p", "0"}, "--port"},
           {{"-s", ""}, "--server"}}) {
    std::vector<std::string> argv = {"run", "--db", dir.file("bad.db")};
    argv.insert(argv.end(), args.begin(), args.end());
    auto bad = run_kvdrive(dir, argv);
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_NE(bad.output.find(says), std::string::npos) << bad.output;
  }
}

// memtier's flags with memtier's meanings: the mapping, and the refusals that name kvdrive's
// spelling, on the fake store (what each became is in the results file).
TEST(MemtierFlags, AMemtierCommandLineGetsMemtiersDefaultsAndMeanings) {
  FakeStore store;
  TempDir dir;
  const std::string port = std::to_string(store.port());
  auto out = run_kvdrive(dir, {"run",
                               "--db",
                               dir.file("m.db"),
                               "-s",
                               "127.0.0.1",
                               "-p",
                               port,
                               "-t",
                               "1",
                               "-c",
                               "2",
                               "-n",
                               "30",
                               "--key-maximum",
                               "99",
                               "--select-db",
                               "3",
                               "--data-size-range",
                               "10-20",
                               "--print-percentiles",
                               "50,99.9",
                               "--json-out-file",
                               dir.file("m.json"),
                               "--hide-histogram",
                               "--distinct-client-seed",
                               "-R"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("-n 30 per connection x 1 threads x 2 connections = 60 requests"),
            std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("p99.9 ms"), std::string::npos) << out.output;
  EXPECT_TRUE(std::filesystem::exists(dir.file("m.json")));
  kv::Database db = kv::open_results_db(dir.file("m.db"));
  EXPECT_EQ(query_text(db, "SELECT uri FROM targets"), "redis://127.0.0.1:" + port + "/3");
  EXPECT_EQ(query_text(db,
                       "SELECT group_concat(kind || ' ' || requests || ' ' || connections) FROM "
                       "phases"),
            "mixed 60 2");
  const std::string params = query_text(db, "SELECT parameters FROM runs");
  for (const char* want :
       {"\"keys\":100,", "\"key_prefix\":\"memtier-\"", "\"value_size\":\"10-20\"",
        "\"key_pattern\":\"uniform\"", "\"ratio\":\"1:10\""})
    EXPECT_NE(params.find(want), std::string::npos) << want << " in " << params;
  // --rate-limiting is per connection, --requests (memtier's -n) too; keys 1..1000 are 1000.
  auto rated = run_kvdrive(dir, {"run",
                                 "--db",
                                 dir.file("r.db"),
                                 "-s",
                                 "127.0.0.1",
                                 "-p",
                                 port,
                                 "-t",
                                 "2",
                                 "-c",
                                 "3",
                                 "--requests",
                                 "5",
                                 "--rate-limiting",
                                 "100",
                                 "--key-minimum",
                                 "1",
                                 "--key-maximum",
                                 "1000",
                                 "--key-pattern",
                                 "G:G",
                                 "--ratio",
                                 "1:1"});
  ASSERT_EQ(rated.exit_code, 0) << rated.output;
  kv::Database r = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_text(r, "SELECT requests || ' ' || rate FROM phases"), "30 600.0");
  EXPECT_NE(query_text(r, "SELECT parameters FROM runs").find("\"keys\":1000,"), std::string::npos);
  // What kvdrive has no meaning for: one line naming its spelling, exit 2, nothing written.
  for (const auto& [args, says] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--key-pattern", "R:S"}, "kvdrive picks the keys of sets and gets alike"},
           {{"--key-pattern", "P:P"}, "--phases load"},
           {{"-n", "allkeys"}, "--phases load"},
           {{"-x", "3"}, "--repeat N runs it N times"},
           {{"--expiry-range", "10-20"}, "--ttl"},
           {{"-n", "10", "--test-time", "1"}, "give one"},
           {{"--key-minimum", "10", "--key-maximum", "5"}, "--key-maximum must not be below"},
           {{"-S", "/tmp/redis.sock"}, "over TCP"},
           {{"--select-db", "1", "-P", "memcache_text"}, "memcached has no databases"}}) {
    std::vector<std::string> argv = {"run", "--db", dir.file("bad.db"), "-s", "127.0.0.1",
                                     "-p",  port};
    argv.insert(argv.end(), args.begin(), args.end());
    auto bad = run_kvdrive(dir, argv);
    EXPECT_EQ(bad.exit_code, 2) << bad.output;
    EXPECT_EQ(std::count(bad.output.begin(), bad.output.end(), '\n'), 1) << bad.output;
    EXPECT_NE(bad.output.find(says), std::string::npos) << bad.output;
    EXPECT_FALSE(std::filesystem::exists(dir.file("bad.db")));
  }
  // kvdrive's own spelling: --ratio without a mixed phase would be ignored; it is refused.
  auto ratio = run_kvdrive(dir, {"run", "--db", dir.file("bad.db"), "--target",
                                 "redis://127.0.0.1:" + port, "--ratio", "1:1"});
  EXPECT_EQ(ratio.exit_code, 2) << ratio.output;
  EXPECT_NE(ratio.output.find("--phases load,mixed"), std::string::npos) << ratio.output;
}

// The memtier command lines docs/memtier.md says run as written: each against a real
// redis-server or memcached (its port put in), exit 0, the servers' own counts of sets and
// gets equal kvdrive's, -n x -t x -c requests exactly, sets and gets at --ratio.
TEST(MemtierFlags, TheDocumentedCommandLinesRunAgainstRealServers) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  std::ifstream doc(std::string(KV_SOURCE_DIR) + "/docs/memtier.md");
  std::vector<std::vector<std::string>> lines;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("memtier_benchmark -s", 0) != 0) continue;
    std::istringstream words(line);
    lines.emplace_back(std::istream_iterator<std::string>(words),
                       std::istream_iterator<std::string>());
  }
  ASSERT_GE(lines.size(), 4u);
  TempDir dir;
  int n = 0;
  for (auto args : lines) {
    SCOPED_TRACE(testing::PrintToString(args));
    const std::string db = dir.file("m" + std::to_string(++n) + ".db");
    const auto flag = [&](const std::string& name, const std::string& fallback) {
      const auto it = std::find(args.begin(), args.end(), name);
      return it != args.end() && it + 1 != args.end() ? *(it + 1) : fallback;
    };
    const bool is_memcached = flag("-P", "redis").rfind("memcache", 0) == 0;
    for (auto& a : args) {
      if (a == "6379") a = std::to_string(redis.port());
      if (a == "11211") a = std::to_string(memcached.port());
    }
    args[0] = "run";
    args.insert(args.begin() + 1, {"--db", db});
    const auto counts = [&] {
      if (is_memcached) {
        const std::string stats = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
        return std::pair(stat_value(stats, "cmd_set"), stat_value(stats, "cmd_get"));
      }
      return std::pair(redis_command_calls(redis.port(), "set"),
                       redis_command_calls(redis.port(), "get"));
    };
    const auto before = counts();
    auto out = run_kvdrive(dir, args);
    ASSERT_EQ(out.exit_code, 0) << out.output;
    const auto after = counts();
    kv::Database d = kv::open_results_db(db);
    const std::string proto = is_memcached ? "memcached" : "redis";
    const int64_t sets = driver_sum(d, "ops", proto, "set"),
                  gets = driver_sum(d, "ops", proto, "get");
    EXPECT_EQ(after.first - before.first, sets);
    EXPECT_EQ(after.second - before.second, gets);
    EXPECT_EQ(query_text(d, "SELECT group_concat(kind) FROM phases"), "mixed");
    const int64_t threads = std::stoll(flag("-t", "4")), conns = std::stoll(flag("-c", "50"));
    if (flag("-n", "").empty()) {
      EXPECT_GT(sets + gets, 0);
    } else {
      EXPECT_EQ(sets + gets, std::stoll(flag("-n", "")) * threads * conns);
    }
    // --ratio S:G: each connection's stream keeps it, to one request per connection.
    const std::string ratio = flag("--ratio", "1:10");
    const double s = std::stod(ratio.substr(0, ratio.find(':')));
    const double g = std::stod(ratio.substr(ratio.find(':') + 1));
    EXPECT_NEAR(static_cast<double>(sets), static_cast<double>(sets + gets) * s / (s + g),
                static_cast<double>(threads * conns) + 1);
  }
}

TEST(KvdriveHabits, LogLevelAlsoAfterTheSubcommand) {
  FakeStore store;
  TempDir dir;
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target",
                               "redis://127.0.0.1:" + std::to_string(store.port()), "--keys", "20",
                               "--log-level", "debug"});
  EXPECT_EQ(out.exit_code, 0) << out.output;
  auto listed = run_kvdrive(dir, {"scenarios", "--log-level", "error"});
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  auto bad = run_kvdrive(dir, {"report", "--db", dir.file("r.db"), "--log-level", "loud"});
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("log level 'loud'"), std::string::npos) << bad.output;
}

TEST(KvdriveHabits, HelpShowsTypesAndRealDefaults) {
  TempDir dir;
  auto help = run_kvdrive(dir, {"run", "-h"});  // -h stays help
  ASSERT_EQ(help.exit_code, 0) << help.output;
  const std::string& h = help.output;
  EXPECT_EQ(h.find(" TEXT:"), std::string::npos) << h;  // no "TEXT:DURATION"
  EXPECT_EQ(h.find("[default: 0]"), std::string::npos) << h;
  for (const char* shown : {"--db FILE",
                            "--target URI",
                            "--duration,--test-time DURATION",
                            "[default: none]",
                            "--keys N",
                            "-d,--value-size,--data-size SIZE",
                            "-t,--threads N",
                            "-c,--connections,--clients N",
                            "--timeout DURATION=5s",
                            "--monitor HOST:PORT",
                            "-s,--server HOST",
                            "-p,--port PORT",
                            "-P,--protocol PROTOCOL",
                            "-a,--authenticate PASSWORD",
                            "[default: one per key]",
                            "--slo PCT=DURATION,...",
                            "--rates RATE,...",
                            "--min-achieved FRACTION",
                            "--search-growth FACTOR",
                            "--search-steps COUNT",
                            "--distress NAME=VALUE,...",
                            "--max-slip DURATION"})
    EXPECT_NE(h.find(shown), std::string::npos) << shown << "\n" << h;
  auto report = run_kvdrive(dir, {"report", "--help"});
  EXPECT_NE(report.output.find("--db FILE"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("--log-level LEVEL"), std::string::npos) << report.output;
}

}  // namespace
