// Whose time is it: each request's latency split into client send, wire, client receive (and, in
// rate mode, the wait for a --pipeline slot), against a real redis-server. LatencyParts checks
// the bookkeeping (every answered request split, the tables and outputs); LatencyAttribution the
// timing: a stalled kvdrive is the client's time, a stalled store the store's. (The timing
// suite runs in the plain build only: scripts/sanitize.sh leaves it out.)
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <kvbench/histogram.hpp>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "cpu_cgroup.hpp"
#include "kvdrive_test_util.hpp"

namespace {
using namespace kv::test;

// A part's figure of the one phase of `kind` (phase_part_percentiles), µs; -1 when none.
double part(kv::Database& db, const std::string& kind, const std::string& op,
            const std::string& name, const std::string& column) {
  return query_double(db, "SELECT COALESCE((SELECT x." + column +
                              " FROM phase_part_percentiles x JOIN phases p USING (phase_id) "
                              "WHERE p.kind = '" +
                              kind + "' AND x.op = '" + op + "' AND x.part = '" + name + "'), -1)");
}

double latency(kv::Database& db, const std::string& kind, const std::string& op,
               const std::string& column) {
  return query_double(db, "SELECT x." + column +
                              " FROM phase_percentiles x JOIN phases p USING (phase_id) "
                              "WHERE p.kind = '" +
                              kind + "' AND x.op = '" + op +
                              "' AND x.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE "
                              "'intended' END");
}

// Answered requests of a phase's op after its warm-up.
int64_t answered(kv::Database& db, const std::string& kind, const std::string& op) {
  return query_int(db,
                   "SELECT SUM(d.ok) FROM driver_seconds d JOIN phases p USING (phase_id) "
                   "WHERE d.warmup = 0 AND p.kind = '" +
                       kind + "' AND d.op = '" + op + "'");
}

TEST(LatencyParts, EveryAnsweredRequestIsSplitAndTheOutputsCarryTheParts) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  auto r = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                             "2000", "--phases", "load,read", "--requests", "4000", "--threads",
                             "2", "--connections", "2", "--pipeline", "4"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  for (const auto& [kind, op] :
       {std::pair<std::string, std::string>{"load", "set"}, {"read", "get"}}) {
    const int64_t ok = answered(db, kind, op);
    ASSERT_GT(ok, 0) << kind;
    // Plain TCP: every answered request left at a known time and its reply was stamped (but
    // for the first replies, should the kernel turn host-wide stamping on only after them).
    EXPECT_EQ(part(db, kind, op, "client_send", "count"), ok) << kind;
    EXPECT_GE(part(db, kind, op, "wire", "count"), static_cast<double>(ok) * 0.99) << kind;
    EXPECT_LE(part(db, kind, op, "wire", "count"), ok) << kind;
    EXPECT_EQ(part(db, kind, op, "client_recv", "count"), part(db, kind, op, "wire", "count"));
    EXPECT_EQ(part(db, kind, op, "queue", "count"), -1) << kind << ": closed loop has no queue";
    // A part is a share of the whole: the wire's median is not above the latency's.
    EXPECT_LE(part(db, kind, op, "wire", "p50_us"), latency(db, kind, op, "p50_us") * 1.01 + 1);
    // Each second's part histograms add up to the phase's (warm-up left out).
    EXPECT_EQ(query_int(db,
                        "SELECT SUM(s.count) FROM second_part_buckets s JOIN phases p USING "
                        "(phase_id) JOIN driver_seconds d ON d.phase_id = s.phase_id AND d.ts_us "
                        "= s.ts_us AND d.op = s.op WHERE d.warmup = 0 AND s.part = 'wire' AND "
                        "p.kind = '" +
                            kind + "'"),
              ok);
  }
  // The per-second parts are kept at 16 buckets per power of two: each row's bound is that of
  // the last of 8 adjacent buckets, so a second's percentile of a part is within 6.25 %.
  auto bounds = db.prepare("SELECT DISTINCT upper_us FROM second_part_buckets");
  int distinct_bounds = 0;
  while (bounds.step()) {
    ++distinct_bounds;
    const auto ns = static_cast<uint64_t>(std::llround(bounds.column_double(0) * 1000.0));
    const int index = kv::LatencyHistogram::index_of(ns);
    EXPECT_EQ(index % 8, 7) << ns << " ns";
    EXPECT_EQ(kv::LatencyHistogram::bucket_upper_ns(index), ns);
  }
  EXPECT_GT(distinct_bounds, 0);
  // Where the time went: at each percentile the mean parts add up to the mean latency there.
  auto rows = db.prepare(
      "SELECT count, latency_us, queue_us + client_send_us + wire_us + client_recv_us "
      "FROM latency_part_bins");
  int64_t binned = 0;
  while (rows.step()) {
    binned += rows.column_int(0);
    EXPECT_NEAR(rows.column_double(2), rows.column_double(1), rows.column_double(1) * 1e-6 + 1);
  }
  EXPECT_EQ(binned, query_int(db, "SELECT SUM(count) FROM latency_part_range WHERE part = 'wire'"));
  // The text report shows where the time went; JSON and CSV carry the flat columns.
  auto text = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  ASSERT_EQ(text.exit_code, 0) << text.output;
  EXPECT_NE(text.output.find("where the time went"), std::string::npos) << text.output;
  EXPECT_NE(text.output.find("client recv"), std::string::npos) << text.output;
  auto json = run_kvdrive(dir, {"report", "--db", dir.file("r.db"), "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto doc = nlohmann::json::parse(json.output);
  bool seen = false;
  for (const auto& run : doc["runs"])
    for (const auto& row : run["phases"]) {
      ASSERT_TRUE(row.contains("wire_p99_us")) << row.dump();
      ASSERT_TRUE(row.contains("client_send_p99_us")) << row.dump();
      ASSERT_TRUE(row.contains("client_recv_p50_us")) << row.dump();
      EXPECT_TRUE(row["wire_p99_us"].is_number()) << row.dump();
      EXPECT_LE(row["wire_p50_us"].get<double>(), row["lat_p50_us"].get<double>() * 1.01 + 1);
      seen = true;
    }
  EXPECT_TRUE(seen) << json.output;
}

// --wire-start kernel: the wire begins at the kernel's transmit stamp of each request's send.
// Every answered request is still split, each worker says how many of its requests had their
// stamp (a memcached pool's links and Redis alike), and the choice is in the run's parameters.
TEST(LatencyParts, WithWireStartKernelEveryRequestsWireBeginsAtItsTransmitStamp) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  StoreServer mc1(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(mc1);
  StoreServer mc2(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(mc2);
  TempDir dir;
  const std::string pool = "memcached://127.0.0.1:" + std::to_string(mc1.port()) +
                           ",127.0.0.1:" + std::to_string(mc2.port());
  auto r = run_kvdrive(dir, {"--log-level",
                             "debug",
                             "run",
                             "--db",
                             dir.file("r.db"),
                             "--target",
                             redis.uri(),
                             "--target",
                             pool,
                             "--keys",
                             "2000",
                             "--phases",
                             "load,read",
                             "--requests",
                             "4000",
                             "--threads",
                             "2",
                             "--connections",
                             "2",
                             "--pipeline",
                             "4",
                             "--wire-start",
                             "kernel"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // "worker 0: the wire of N requests began at the kernel's transmit stamp, M at the send call"
  int64_t stamped = 0, unstamped = 0, lines = 0;
  const std::string mark = ": the wire of ";
  for (size_t at = r.output.find(mark); at != std::string::npos; at = r.output.find(mark, at + 1)) {
    const char* p = r.output.c_str() + at + mark.size();
    char* end = nullptr;
    stamped += std::strtoll(p, &end, 10);
    const size_t comma = r.output.find(", ", static_cast<size_t>(end - r.output.c_str()));
    ASSERT_NE(comma, std::string::npos);
    unstamped += std::strtoll(r.output.c_str() + comma + 2, nullptr, 10);
    ++lines;
  }
  EXPECT_EQ(lines, 2 * 2 * 2) << "a line per worker, phase and target: " << r.output;
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t ok = query_int(db, "SELECT SUM(ok) FROM driver_seconds");
  EXPECT_EQ(stamped + unstamped, ok);
  EXPECT_GE(static_cast<double>(stamped), static_cast<double>(ok) * 0.99) << r.output;
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM phases WHERE json_extract(parameters, "
                      "'$.wire_start') = 'kernel'"),
            4);
  // Both targets' phases: every answered request has its send part.
  EXPECT_EQ(query_int(db,
                      "SELECT SUM(count) FROM phase_part_percentiles WHERE part = "
                      "'client_send'"),
            ok);
}

// Beside the parts, the store's own execution where it tells it: Redis 7's LATENCY HISTOGRAM of
// the op's command at each percentile over the phase (part of the wire time, in µs like it);
// memcached keeps none, and a mean is no percentile: null there.
TEST(LatencyParts, TheStoresOwnTimeStandsBesideTheWireWhereRedisTellsIt) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  StoreServer memcached(StoreServer::Kind::memcached);
  KV_START_OR_SKIP(memcached);
  TempDir dir;
  auto r = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--target",
                             memcached.uri(), "--keys", "1000", "--phases", "read", "--duration",
                             "3s", "--rate", "2000", "--threads", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.output;
  auto json = run_kvdrive(dir, {"report", "--db", dir.file("r.db"), "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto doc = nlohmann::json::parse(json.output);
  int redis_rows = 0, memcached_rows = 0;
  std::map<std::string, double> own;
  for (const auto& row : doc["runs"][0]["parts"]) {
    const std::string at = row["at"].get<std::string>();
    if (row["store"].get<std::string>().rfind("memcached://", 0) == 0) {
      EXPECT_TRUE(row["store_own_us"].is_null()) << row.dump();
      ++memcached_rows;
      continue;
    }
    ++redis_rows;
    if (at == "mean") {
      EXPECT_TRUE(row["store_own_us"].is_null()) << row.dump();
      continue;
    }
    ASSERT_TRUE(row["store_own_us"].is_number()) << row.dump();
    own[at] = row["store_own_us"].get<double>();
    // Inside the wire time (its bucket's upper bound at most twice the call's time): µs, not ns.
    EXPECT_GT(own[at], 0) << row.dump();
    if (at == "p50") {
      EXPECT_LE(own[at], 2 * row["wire_us"].get<double>() + 2) << row.dump();
    }
  }
  EXPECT_GT(redis_rows, 0) << json.output;
  EXPECT_GT(memcached_rows, 0) << json.output;
  EXPECT_LE(own["p50"], own["p99"]);
  EXPECT_LE(own["p99"], own["max"]);
  auto text = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  EXPECT_NE(text.output.find("store's own ms"), std::string::npos) << text.output;
}

// kvdrive itself stopped for a second in a rate phase: the end-to-end p99 carries the stall,
// the wire does not (it stays in the quiet run's range), and the client's parts do.
TEST(LatencyAttribution, AStalledClientIsTheClientsTimeNotTheWires) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "load,read", "--duration", "6s", "--rate", "1000", "--threads", "2"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 2))) << slurp(log);
  p.signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  p.signal(SIGCONT);
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  const double lat_p99 = latency(db, "read", "get", "p99_us");
  const double wire_p99 = part(db, "read", "get", "wire", "p99_us");
  const double send_p99 = part(db, "read", "get", "client_send", "p99_us");
  EXPECT_GT(lat_p99, 300'000) << "the stall is in the end-to-end latency";
  EXPECT_LT(wire_p99, 50'000) << "the store answered at once: the wire did not wait";
  EXPECT_GT(send_p99, 300'000) << "the requests due in the stall left late: kvdrive's time";
  // The backlog left after the stall drains through each connection's window, one round trip
  // each: that wait is queue (tens of ms on a loaded host), never the stall's second.
  EXPECT_LT(part(db, "read", "get", "queue", "p99_us"), 200'000);
  // Named: a client_stall event in the stall's second, a hint, and the summary's note.
  EXPECT_GE(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'client_stall'"), 1);
  EXPECT_NE(slurp(log).find("the client, not the store"), std::string::npos) << slurp(log);
  auto report = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  ASSERT_EQ(report.exit_code, 0) << report.output;
  EXPECT_NE(report.output.find("hint: "), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("is kvdrive's own time"), std::string::npos) << report.output;
}

// A kvdrive held to 2 % of a core by a CPU cgroup: its workers wait for a CPU, using none,
// and every second says how long (client_seconds.run_delay_us), as the client-stall line does.
TEST(LatencyAttribution, AStarvedClientsWaitForACpuIsRecordedEverySecond) {
  std::string why;
  CpuCgroup cg(1000, 50'000, &why);
  if (!why.empty()) {
    if (servers_required()) FAIL() << why;
    GTEST_SKIP() << why;
  }
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process kvdrive(cg.command({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(),
                              "--keys", "200", "--phases", "load,read", "--duration", "3s",
                              "--rate", "2000", "--threads", "1"}),
                  log);
  ASSERT_EQ(kvdrive.wait(120'000), 0) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  // Every second the collector measured (a second it skipped, starved too, has no sample).
  EXPECT_GE(query_int(db,
                      "SELECT count(*) FROM client_seconds c JOIN phases p USING (phase_id) "
                      "WHERE p.kind = 'read' AND c.run_delay_us IS NOT NULL"),
            2);
  // Runnable but not running for most of the time the quota leaves it: hundreds of ms a second.
  EXPECT_GE(query_int(db,
                      "SELECT MAX(c.run_delay_us) FROM client_seconds c JOIN phases p USING "
                      "(phase_id) WHERE p.kind = 'read'"),
            100'000);
}

// The store stopped for a second: its time is the store-side parts' (the wire, and the wait for
// a --pipeline slot that its missing replies held), never the client's.
TEST(LatencyAttribution, AStalledStoreIsTheStoresTimeNotTheClients) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "load,read", "--duration", "6s", "--rate", "1000", "--threads", "2",
             "--timeout", "5s"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 2))) << slurp(log);
  redis.process().signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  redis.process().signal(SIGCONT);
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_GT(latency(db, "read", "get", "p99_us"), 300'000);
  EXPECT_GT(part(db, "read", "get", "wire", "max_us"), 300'000) << "in flight through the stall";
  EXPECT_GT(part(db, "read", "get", "queue", "p99_us"), 300'000)
      << "the requests due in the stall waited for their connection's slot";
  EXPECT_LT(part(db, "read", "get", "client_send", "p99_us"), 50'000);
  EXPECT_LT(part(db, "read", "get", "client_recv", "p99_us"), 50'000);
  // A stalled store is the store's time: no client_stall event for the stall's requests (p99
  // ~1 s). One elsewhere is kvdrive's own: a start-up second beside another test's load, or
  // the drain after the stall on a loaded host, where each round trip waits for kvdrive too.
  EXPECT_EQ(query_int(db,
                      "SELECT COUNT(*) FROM events WHERE kind = 'client_stall' AND "
                      "CAST(substr(message, instr(message, ' p99 ') + 5) AS REAL) >= 500"),
            0)
      << query_text(db, "SELECT group_concat(message, char(10)) FROM events");
}

// Every due request is accounted for. The store stopped for 3 s from 4–5 s into a 6 s phase at
// 200 req/s: the requests due in its last 1–2 s leave late, once it answers again, their latency
// from when they were due, so all 1,200 are answered and the p99 is the stall's ~2.9 s. (Five
// rows, not four: the first second is cut at a wall-clock second, so four rows can be there 3 s
// in, and a stall that ends with the phase extends nothing.)
TEST(LatencyAttribution, RequestsDueBeforeThePhasesEndAreSentLateNotDropped) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "read", "--duration", "6s", "--rate", "200", "--threads", "2"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 5))) << slurp(log);
  redis.process().signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  redis.process().signal(SIGCONT);
  ASSERT_EQ(p.wait(60'000), 0) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  EXPECT_EQ(query_int(db, "SELECT SUM(ops) FROM driver_seconds"), 1200);
  EXPECT_EQ(query_int(db, "SELECT SUM(dropped) FROM driver_seconds"), 0);
  EXPECT_EQ(query_int(db, "SELECT COUNT(*) FROM events WHERE kind = 'phase_extended'"), 1)
      << "the phase ran past its 6 s and says so";
  const double p99 = latency(db, "read", "get", "p99_us");
  EXPECT_GT(p99, 2'000'000);
  EXPECT_LT(p99, 3'500'000);
}

// A store that stays stopped past the request timeout after the end: what could not leave by
// then is dropped, counted, never lost: ops + dropped = the 1,200 due.
TEST(LatencyAttribution, RequestsThatCannotLeaveInTimeAreCountedAsDropped) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string log = dir.file("kvdrive.log");
  Process p({kKvdrive, "run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys", "1000",
             "--phases", "read", "--duration", "6s", "--rate", "200", "--threads", "2", "--timeout",
             "1s"},
            log);
  ASSERT_TRUE(wait_for_value(dir.file("r.db"), phase_rows_at_least("read", 4))) << slurp(log);
  redis.process().signal(SIGSTOP);
  std::this_thread::sleep_for(std::chrono::milliseconds(4500));
  redis.process().signal(SIGCONT);
  const int code = p.wait(60'000);
  EXPECT_TRUE(code == 0 || code == 1) << slurp(log);
  auto db = kv::open_results_db(dir.file("r.db"));
  const int64_t ops = query_int(db, "SELECT SUM(ops) FROM driver_seconds");
  const int64_t dropped = query_int(db, "SELECT SUM(dropped) FROM driver_seconds");
  EXPECT_GT(dropped, 0);
  EXPECT_EQ(ops + dropped, 1200) << ops << " + " << dropped;
  auto json = run_kvdrive(dir, {"report", "--db", dir.file("r.db"), "--format", "json"});
  ASSERT_EQ(json.exit_code, 0) << json.output;
  const auto doc = nlohmann::json::parse(json.output);
  EXPECT_EQ(doc["runs"][0]["phases"][0]["dropped"].get<int64_t>(), dropped);
  auto text = run_kvdrive(dir, {"report", "--db", dir.file("r.db")});
  EXPECT_NE(text.output.find("dropped (requests + dropped"), std::string::npos) << text.output;
}

// Pacing's spin is bounded by --spin-budget, not by the oversleeps: beside two busy loops the
// wake-ups come late, the margin grows to its cap, and without a budget the worker spun ~200 ms
// of every second at 5,000 req/s (bench/pacing_cpu.sh --busy 2 --pin no). With 5 % it spins at
// most ~50 ms a second (a descheduled spin is charged its lost time, so allow twice that); with
// 0 it never spins. (A timing suite: plain build only, scripts/sanitize.sh.)
TEST(PacingCost, ASpinBudgetBoundsTheSpinOnABusyHost) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  Process busy1({"/bin/sh", "-c", "while :; do :; done"}, dir.file("busy1.log"));
  Process busy2({"/bin/sh", "-c", "while :; do :; done"}, dir.file("busy2.log"));
  for (const char* budget : {"5%", "0"}) {
    auto r = run_kvdrive(dir, {"run", "--db", dir.file("r.db"), "--target", redis.uri(), "--keys",
                               "1000", "--phases", "read", "--duration", "4s", "--rate", "5000",
                               "--threads", "1", "--spin-budget", budget});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  busy1.signal(SIGKILL);
  busy2.signal(SIGKILL);
  auto db = kv::open_results_db(dir.file("r.db"));
  const std::string spin_of =
      "SELECT COALESCE(SUM(c.spin_us), 0) FROM client_seconds c JOIN phases p USING (phase_id) "
      "WHERE p.run_id = ";
  EXPECT_LE(query_int(db, spin_of + "1"), 4 * 100'000) << "at most twice 5 % of its 4 s";
  EXPECT_EQ(query_int(db, spin_of + "2"), 0) << "--spin-budget 0 sleeps only";
  EXPECT_EQ(query_text(db,
                       "SELECT json_extract(parameters, '$.spin_budget') FROM runs "
                       "WHERE run_id = 1"),
            "0.05");
  // Every request still left, late or not.
  EXPECT_EQ(query_int(db, "SELECT SUM(ops) FROM driver_seconds"), 2 * 20'000);
}

// --pace-granularity: requests due within a step leave together at its end (or sooner, when the
// thread is up for replies), so a thread wakes once per step instead of once per request
// (bench/many_connections.sh: 10,000 connections, docs/performance.md); a step above 5 ms moves
// the timeout check to each step's end too, so the wait is half a step on average, not 5 ms at
// most. The wait is the client's: it is in each request's client-send part, from the intended
// send time, and every request due is still answered. (A timing suite: plain build only.)
TEST(PacingCost, APaceGranularityGroupsSendsAndChargesTheWaitToTheClient) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  for (const char* step : {"0", "20ms"}) {
    auto r = run_kvdrive(dir, {"run",
                               "--db",
                               dir.file("r.db"),
                               "--target",
                               redis.uri(),
                               "--keys",
                               "1000",
                               "--phases",
                               "read",
                               "--duration",
                               "3s",
                               "--rate",
                               "2000",
                               "--threads",
                               "1",
                               "--connections",
                               "20",
                               "--spin-budget",
                               "0",
                               "--pace-granularity",
                               step});
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }
  auto db = kv::open_results_db(dir.file("r.db"));
  const auto send_mean = [&](int run) {
    return query_double(db,
                        "SELECT r.mean_us FROM latency_part_range r JOIN phases p USING "
                        "(phase_id) WHERE r.part = 'client_send' AND p.run_id = " +
                            std::to_string(run));
  };
  const double exact = send_mean(1), stepped = send_mean(2);
  EXPECT_GE(stepped - exact, 5000.0)
      << "client send: " << exact << " us exact, " << stepped << " us with 20 ms steps";
  EXPECT_LE(query_double(db,
                         "SELECT MAX(d.slip_max_us) FROM driver_seconds d JOIN phases p USING "
                         "(phase_id) WHERE p.run_id = 2"),
            1e6);
  for (int run : {1, 2}) {  // every request due was answered
    const std::string of_run =
        " FROM driver_seconds d JOIN phases p USING (phase_id) WHERE p.run_id = " +
        std::to_string(run);
    EXPECT_EQ(query_int(db, "SELECT SUM(d.ops)" + of_run), 6000) << "run " << run;
    EXPECT_EQ(query_int(db, "SELECT SUM(d.dropped)" + of_run), 0) << "run " << run;
  }
  EXPECT_EQ(query_int(db,
                      "SELECT json_extract(parameters, '$.pace_granularity_us') FROM runs "
                      "WHERE run_id = 2"),
            20000);
  EXPECT_EQ(query_int(db,
                      "SELECT json_extract(parameters, '$.pace_granularity_us') IS NULL FROM runs "
                      "WHERE run_id = 1"),
            1);
}

}  // namespace
