// run --trace against real redis-server and memcached: a generated 100k-request trace replayed
// at its recorded timing sends each operation as often as the trace holds it, the stores count
// exactly that, both stores answer every request alike (each key's requests in file order on
// one connection), the phase lasts the trace's time; fast timing, --speed, --requests,
// --trace-keys-scale and counter keys; a bad line is refused before anything starts.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "kvdrive_test_util.hpp"
#include "workload/trace.hpp"

namespace {
using namespace kv::test;
using kv::drive::TraceSpec;

// A trace in `dir`; returns its path and counts its operations into `ops`.
std::string make_trace(const TempDir& dir, const TraceSpec& spec, std::map<std::string, int>* ops) {
  std::ostringstream text;
  kv::drive::write_trace(spec, text);
  const std::string path = dir.file("trace.csv");
  std::ofstream(path) << text.str();
  std::istringstream lines(text.str());
  for (std::string line; std::getline(lines, line);) {
    kv::drive::TraceRecord r;
    if (!kv::drive::parse_trace_line(line, r)) ++(*ops)[std::string(trace_op_name(r.op))];
  }
  return path;
}

int64_t trace_sum(kv::Database& db, const std::string& column, const std::string& protocol,
                  const std::string& op) {
  return driver_sum(db, column, protocol, op, "trace");
}

// 100,000 requests over 10 s (10,000 a second): 20 % sets, 5 % deletes, the rest gets of 10,000
// zipf keys, values 50 B - 10 KB, TTL 5 min (none expires within the run).
TEST(TraceReplay, RecordedTimingSendsTheTraceAndBothStoresCountIt) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  TraceSpec spec;
  spec.requests = 100'000;
  spec.keys = 10'000;
  spec.write_fraction = 0.2;
  spec.delete_fraction = 0.05;
  spec.value_min = 50;
  spec.value_max = 10'000;
  spec.ttl_s = 300;
  std::map<std::string, int> ops;
  const std::string trace = make_trace(dir, spec, &ops);
  auto out =
      run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri(), "--target",
                        redis.uri(), "--trace", trace, "--threads", "2", "--connections", "4"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM phases WHERE kind = 'trace' AND requests = 100000"),
            2);
  EXPECT_EQ(query_int(db,
                      "SELECT COALESCE(SUM(errors + timeouts + dropped), 0) FROM "
                      "driver_seconds"),
            0);
  for (const std::string protocol : {"memcached", "redis"}) {
    EXPECT_EQ(trace_sum(db, "ops", protocol, "get"), ops["get"]) << protocol;
    EXPECT_EQ(trace_sum(db, "ops", protocol, "set"), ops["set"]) << protocol;
    EXPECT_EQ(trace_sum(db, "ops", protocol, "delete"), ops["delete"]) << protocol;
  }
  // The stores' own counts.
  const std::string m = tcp_request(memcached.port(), "stats\r\n", "END\r\n");
  EXPECT_EQ(stat_value(m, "cmd_get"), ops["get"]);
  EXPECT_EQ(stat_value(m, "cmd_set"), ops["set"]);
  EXPECT_EQ(stat_value(m, "get_hits"), trace_sum(db, "hits", "memcached", "get"));
  EXPECT_EQ(stat_value(m, "delete_hits"), trace_sum(db, "hits", "memcached", "delete"));
  EXPECT_EQ(redis_command_calls(redis.port(), "get"), ops["get"]);
  EXPECT_EQ(redis_command_calls(redis.port(), "set"), ops["set"]);
  EXPECT_EQ(redis_command_calls(redis.port(), "del"), ops["delete"]);
  EXPECT_EQ(stat_value(redis_info(redis.port(), "stats"), "keyspace_hits"),
            trace_sum(db, "hits", "redis", "get"));
  // Each key's requests went in file order: the two stores found and missed the same keys.
  EXPECT_GT(trace_sum(db, "misses", "redis", "get"), 0);
  EXPECT_EQ(trace_sum(db, "hits", "redis", "get"), trace_sum(db, "hits", "memcached", "get"));
  EXPECT_EQ(trace_sum(db, "hits", "redis", "delete"), trace_sum(db, "hits", "memcached", "delete"));
}

// Fast timing sends the same requests closed loop; --requests takes the trace's first N;
// --trace-keys-scale 0.5 half the keys with all their requests.
TEST(TraceReplay, FastTimingTheFirstRequestsAndHalfTheKeys) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  TraceSpec spec;
  spec.requests = 20'000;
  spec.keys = 2'000;
  spec.rate = 1'000;  // 20 s of trace time
  std::map<std::string, int> ops;
  const std::string trace = make_trace(dir, spec, &ops);
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri(),
                               "--trace", trace, "--trace-timing", "fast", "--requests", "15000",
                               "--threads", "2", "--connections", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT SUM(ops) FROM driver_seconds"), 15'000);
  // Closed loop: not the trace's 15 s.
  EXPECT_LT(query_double(db, "SELECT (ended_ts_us - started_ts_us) / 1e6 FROM phases"), 10.0);
  EXPECT_EQ(query_int(db, "SELECT count(*) FROM driver_seconds WHERE slip_p50_us IS NOT NULL"), 0);

  // The trace sized, kept with the run: kvdrive mrc's curve, row for row, and the HTML report
  // draws it with the store's measured miss ratio.
  auto mrc = run_kvdrive(dir, {"mrc", "--trace", trace, "--format", "json"});
  ASSERT_EQ(mrc.exit_code, 0) << mrc.output;
  const auto curve = nlohmann::json::parse(mrc.output);
  ASSERT_EQ(query_int(db, "SELECT count(*) FROM trace_curves"),
            static_cast<int64_t>(curve["curve"].size()));
  for (const auto& point : curve["curve"]) {
    const std::string at = " FROM trace_curves WHERE abs(fraction - " +
                           std::to_string(point["fraction"].get<double>()) + ") < 1e-9";
    EXPECT_EQ(query_int(db, "SELECT objects" + at), point["objects"].get<int64_t>());
    EXPECT_NEAR(query_double(db, "SELECT objects_miss_ratio" + at),
                point["objects_miss_ratio"].get<double>(), 1e-9);
    EXPECT_NEAR(query_double(db, "SELECT bytes_miss_ratio" + at),
                point["bytes_miss_ratio"].get<double>(), 1e-9);
  }
  EXPECT_EQ(query_int(db, "SELECT value FROM run_metadata WHERE name = 'trace_requests'"), 20'000);
  auto html = run_kvdrive(dir, {"report", "--db", dir.file("r.db"), "--html", dir.file("r.html")});
  ASSERT_EQ(html.exit_code, 0) << html.output;
  const std::string page = slurp(dir.file("r.html"));
  EXPECT_NE(page.find("Miss ratio by cache size: " + trace), std::string::npos);
  EXPECT_NE(page.find(memcached.uri() + " measured"), std::string::npos);

  auto half = run_kvdrive(
      dir, {"run", "--db", dir.file("h.db"), "--target", memcached.uri(), "--trace", trace,
            "--trace-timing", "fast", "--trace-keys-scale", "0.5", "--threads", "2"});
  ASSERT_EQ(half.exit_code, 0) << half.output;
  auto hdb = kv::open_results_db(dir.file("h.db"));
  const int64_t sent = query_int(hdb, "SELECT SUM(ops) FROM driver_seconds");
  EXPECT_GT(sent, 8'000);
  EXPECT_LT(sent, 12'000);
  EXPECT_EQ(query_int(hdb, "SELECT requests FROM phases"), sent);
}

// incr and decr act on counter keys that the trace's sets of the same key reset to 0: Redis's
// INCR never refuses a value, memcached's finds them.
TEST(TraceReplay, AKeyThatIsIncrementedIsACounterForEveryRequest) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  std::string text;
  for (int i = 0; i < 2'000; ++i) {
    const std::string key = "c" + std::to_string(i % 50);
    const char* op = i < 50       ? "set"
                     : i % 5 == 0 ? "incr"
                     : i % 5 == 1 ? "decr"
                     : i % 5 == 2 ? "append"
                                  : "get";
    text += std::to_string(i / 1000) + "," + key + ",3,20,1," + op + ",0\n";
  }
  std::ofstream(dir.file("c.csv")) << text;
  auto out = run_kvdrive(
      dir, {"run", "--db", dir.file("r.db"), "--target", memcached.uri(), "--target", redis.uri(),
            "--trace", dir.file("c.csv"), "--threads", "1", "--connections", "2"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT COALESCE(SUM(errors), 0) FROM driver_seconds"), 0);
  EXPECT_EQ(trace_sum(db, "hits", "memcached", "incr"), 390);
  EXPECT_EQ(trace_sum(db, "hits", "memcached", "get"), 780);
  EXPECT_EQ(redis_command_calls(redis.port(), "incr"), 390);
  EXPECT_EQ(stat_value(tcp_request(memcached.port(), "stats\r\n", "END\r\n"), "incr_misses"), 0);
}

// A trace that changes under the replay (its scan found every line good): the line that does not
// parse ends the replay there, the phase failed with the file and line, an event says so. The
// trace is larger than the reader's 64 KiB chunks, so the reader reaches its last line seconds
// after the line's operation was overwritten in place.
TEST(TraceReplay, ALineThatTurnsBadDuringTheReplayFailsThePhaseNamingIt) {
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  TraceSpec spec;
  spec.requests = 12'000;
  spec.keys = 1'000;
  spec.rate = 3'000;  // 4 s
  std::map<std::string, int> ops;
  const std::string trace = make_trace(dir, spec, &ops);
  const std::string text = slurp(trace);
  const size_t ttl_comma = text.rfind(',', text.size() - 1);
  const size_t op = text.rfind(',', ttl_comma - 1) + 1;  // the last line's operation
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", memcached.uri(), "--trace",
             trace, "--threads", "1"},
            dir.file("kvdrive.log"));
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), "SELECT count(*) FROM phases WHERE kind = 'trace'"));
  {
    std::fstream f(trace, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(op));
    f << 'X';
  }
  EXPECT_EQ(p.wait(60'000), 1) << slurp(dir.file("kvdrive.log"));
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_text(db, "SELECT status FROM phases"), "failed");
  EXPECT_EQ(query_int(db, "SELECT SUM(ops) FROM driver_seconds"), 11'999);
  EXPECT_EQ(query_int(db,
                      "SELECT count(*) FROM events WHERE kind = 'trace_error' AND message "
                      "LIKE '%trace.csv:12000: operation ''X%'"),
            1);
}

// Recorded timing keeps time: 2,000 requests over 4 s of trace at --speed 2 make a 2 s phase at
// 1,000 requests/s, each request sent within microseconds of its time (the median second's slip
// p50, as KvdriveTiming's rate-mode test at that rate; on a quiet 2-core VM 1-2 µs, as rate
// mode's at 10,000/s). A timing assertion: the plain build only.
TEST(TraceTiming, ASpeedOfTwoHalvesThePhaseAndEachRequestLeavesOnTime) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  TraceSpec spec;
  spec.requests = 2'000;
  spec.keys = 500;
  spec.rate = 500;
  std::map<std::string, int> ops;
  const std::string trace = make_trace(dir, spec, &ops);
  auto out = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--trace",
                               trace, "--speed", "2", "--threads", "1", "--connections", "4"});
  ASSERT_EQ(out.exit_code, 0) << out.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const double seconds = query_double(db, "SELECT (ended_ts_us - started_ts_us) / 1e6 FROM phases");
  EXPECT_GT(seconds, 1.95);
  EXPECT_LT(seconds, 2.6);
  EXPECT_EQ(query_int(db, "SELECT SUM(ops) FROM driver_seconds"), 2'000);
  EXPECT_EQ(query_int(db, "SELECT SUM(dropped) FROM driver_seconds"), 0);
  const std::string rows = "FROM driver_seconds WHERE op = 'get' AND ops > 0";
  const int64_t n = query_int(db, "SELECT count(*) " + rows);
  ASSERT_GE(n, 2);
  EXPECT_EQ(query_int(db, "SELECT count(slip_p50_us) " + rows), n);
  // Recorded timing is open loop: phases.rate is the trace's mean rate, times --speed.
  EXPECT_DOUBLE_EQ(query_double(db, "SELECT rate FROM phases"), 1'000.0);
  EXPECT_LT(query_double(db, "SELECT slip_p50_us " + rows +
                                 " ORDER BY slip_p50_us LIMIT 1 OFFSET " + std::to_string(n / 2)),
            40.0);
}

}  // namespace
