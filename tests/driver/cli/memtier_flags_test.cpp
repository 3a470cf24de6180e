// #19's everyday habits, run through the real kvdrive against the fake store: memtier_benchmark's
// flags where they mean what kvdrive's own do, --log-level after the subcommand, and a --help
// whose types and defaults say something.
#include <gtest/gtest.h>

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

// The same run spelled with kvdrive's options and with memtier's gives the same phases.
TEST(MemtierFlags, MeanWhatKvdrivesOwnMean) {
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
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "-p", std::to_string(store.port()),
                               "-P", "memcache_binary", "-s", "127.0.0.1", "--keys", "50"});
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
