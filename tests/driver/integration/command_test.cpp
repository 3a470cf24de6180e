// --command templates against a real redis-server: each command is its own op, sent at its
// --command-ratio with its own key pattern, and Redis counts exactly what the rows say
// (INFO commandstats per command, keyspace hits and misses for the one read).
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

int64_t ops(kv::Database& db, const std::string& op, const std::string& column = "ops") {
  return driver_sum(db, column, "redis", op, "mixed");
}

TEST(Commands, EachTemplateIsItsOwnOpAndRedisCountsEveryOne) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  // Of every 8 requests: 1 incr (a built-in op, on its counter keys), 3 HSETs, 2 HGETs (keys in
  // order, so the later ones find what the HSETs wrote), 1 LPUSH and 1 HSET of other keys.
  auto out = run_kvdrive(dir, {"run",
                               "--db",
                               dir.file("r.db"),
                               "--target",
                               redis.uri(),
                               "--keys",
                               "500",
                               "--requests",
                               "8000",
                               "--value-size",
                               "37",
                               "--key-pattern",
                               "uniform",
                               "--threads",
                               "2",
                               "--connections",
                               "2",
                               "--pipeline",
                               "4",
                               "--mix",
                               "incr:1",
                               "--command",
                               "HSET __key__ f __data__",
                               "--command-ratio",
                               "3",
                               "--command",
                               "HGET __key__ f",
                               "--command-key-pattern",
                               "S",
                               "--command-ratio",
                               "2",
                               "--command",
                               "LPUSH 'list:__key__' __data__",
                               "--command",
                               "HSET \"other:__key__\" g x"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  // --command alone (no --phases): one mixed phase, no load phase of string keys.
  EXPECT_EQ(query_text(db, "SELECT group_concat(kind) FROM phases"), "mixed");
  EXPECT_EQ(ops(db, "incr"), 1000);
  EXPECT_EQ(ops(db, "hset"), 3000);
  EXPECT_EQ(ops(db, "hget"), 2000);
  EXPECT_EQ(ops(db, "lpush"), 1000);
  EXPECT_EQ(ops(db, "hset-2"), 1000);  // the second HSET's rows are its own
  EXPECT_EQ(query_int(db, "SELECT SUM(errors + timeouts) FROM driver_seconds"), 0);
  EXPECT_EQ(redis_command_calls(redis.port(), "hset"), ops(db, "hset") + ops(db, "hset-2"));
  EXPECT_EQ(redis_command_calls(redis.port(), "hget"), ops(db, "hget"));
  EXPECT_EQ(redis_command_calls(redis.port(), "lpush"), ops(db, "lpush"));
  EXPECT_EQ(redis_command_calls(redis.port(), "incr"), ops(db, "incr"));
  // HGET is the one read: a value is a hit, nil a miss, as Redis counts its lookups.
  const std::string stats = redis_info(redis.port(), "stats");
  EXPECT_EQ(stat_value(stats, "keyspace_hits"), ops(db, "hget", "hits"));
  EXPECT_EQ(stat_value(stats, "keyspace_misses"), ops(db, "hget", "misses"));
  EXPECT_EQ(ops(db, "hget", "hits") + ops(db, "hget", "misses"), 2000);
  EXPECT_GT(ops(db, "hget", "hits"), 0);
  // The placeholders: each hash holds its key's 37-byte value, each list was pushed values.
  EXPECT_EQ(tcp_request(redis.port(), "HSTRLEN kv:7 f\r\n", "\r\n"), ":37\r\n");
  EXPECT_EQ(tcp_request(redis.port(), "HGET other:kv:7 g\r\n", "\r\n\r\n").substr(0, 4), "$1\r\n");
  EXPECT_EQ(tcp_request(redis.port(),
                        "EVAL \"local n = 0 for _, k in ipairs(redis.call('KEYS', 'list:*')) do "
                        "n = n + redis.call('LLEN', k) end return n\" 0\r\n",
                        "\r\n"),
            ":1000\r\n");
  // The run's parameters keep each command, its ratio and its own pattern.
  const auto params = nlohmann::json::parse(query_text(db, "SELECT parameters FROM runs"));
  ASSERT_EQ(params["commands"].size(), 4u);
  EXPECT_EQ(params["commands"][1]["command"], "HGET __key__ f");
  EXPECT_EQ(params["commands"][1]["ratio"], 2);
  EXPECT_EQ(params["commands"][1]["key_pattern"], "sequential");
  EXPECT_EQ(params["commands"][3]["op"], "hset-2");
  // The report lists the commands after the built-in ops.
  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_LT(report.output.find(" incr "), report.output.find(" hget ")) << report.output;
  EXPECT_LT(report.output.find(" hget "), report.output.find(" hset-2 ")) << report.output;
}

// In a --config file, where CLI11 keeps no order of the values, the three lists pair by
// position.
TEST(Commands, AConfigFilePairsThemByPosition) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  {
    std::ofstream(dir.file("c.toml"))
        << "[run]\ncommand = [\"HSET __key__ f __data__\", \"HGET __key__ f\"]\n"
           "command-ratio = [3, 1]\ncommand-key-pattern = [\"S\"]\n";
  }
  auto out = run_kvdrive(dir, {"--config", dir.file("c.toml"), "run", "--db", dir.file("c.db"),
                               "--target", redis.uri(), "--keys", "100", "--requests", "400"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("c.db"));
  EXPECT_EQ(ops(db, "hset"), 300);
  EXPECT_EQ(ops(db, "hget"), 100);
  EXPECT_EQ(redis_command_calls(redis.port(), "hset"), 300);
  const auto params = nlohmann::json::parse(query_text(db, "SELECT parameters FROM runs"));
  EXPECT_EQ(params["commands"][0]["key_pattern"], "sequential");
  EXPECT_FALSE(params["commands"][1].contains("key_pattern"));
}

// memtier_benchmark's own spelling, -s/-p with SET and GET templates over two processes: the
// commands replace the default set/get mix, their rows are named set and get, and Redis
// counts every one. (-n 100 x 1 thread x 3 connections = 300 requests, which the group's two
// processes share.)
TEST(Commands, MemtiersCommandLineOverTwoProcessesCountsAsRedisDoes) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("m.db"), "-s", "127.0.0.1", "-p", std::to_string(redis.port()),
            "--command=SET __key__ __data__", "--command=GET __key__", "--command-key-pattern=R",
            "-n", "100", "-t", "1", "-c", "3", "--processes", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("m.db"));
  EXPECT_EQ(query_int(db, "SELECT COUNT(DISTINCT op) FROM driver_seconds"), 2);
  EXPECT_EQ(ops(db, "set"), 150);
  EXPECT_EQ(ops(db, "get"), 150);
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), 150);
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), 150);
  EXPECT_EQ(query_int(db, "SELECT SUM(ops) FROM group_summary WHERE op = 'get'"), 150);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM runs WHERE status = 'completed'"), 2);
}

}  // namespace
