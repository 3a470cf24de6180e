// `kvdrive run --search` against a real redis-server: every step on the event engine with the
// store's own latency beside it, an objective below the path's floor, a step's warm-up, a search
// run by a --processes group (judged on the group's data, stopped by a SIGTERM to its parent);
// bad search options are one line and exit 2.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <string>
#include <vector>

#include "kvdrive_test_util.hpp"
#include "nice_boost.hpp"

namespace kv::test {
namespace {

// Every step of a search runs on the event engine, and each step
// has the store's own view beside the client's: Redis 7's LATENCY HISTOGRAM, polled with its
// counters, gives the step's server-side percentiles, and a failed latency bound says on which
// side of the store the time went.
TEST(KvdriveSearch, StepsRunOnTheEventEngineWithTheServersOwnLatencyBeside) {
  NiceBoost boost(-10);  // the store and kvdrive: at load average 19 kvdrive's thread starved
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("events.db");
  // p90 of 1 µs: no loopback round trip meets it, so each step fails on it and explains it.
  Outcome out = run_kvdrive(
      dir,
      {"run",        "--db", db,         "--target", redis.uri(),        "--keys",  "1000",
       "--threads",  "1",    "--search", "--slo",    "p90=1us",          "--rates", "400,800",
       "--duration", "3s",   "--warmup", "1s",       "--max-client-cpu", "1",       "--max-slip",
       "1h"},
      120'000);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  Database d = Database::open(db);
  EXPECT_EQ(query_text(d, "SELECT value FROM run_metadata WHERE name = 'engine'"), "events");
  ASSERT_EQ(query_int(d, "SELECT count(*) FROM search_steps"), 2) << out.output;
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM search_steps WHERE limit_reason = 'p90'"), 2)
      << out.output;
  for (int step = 0; step < 2; ++step) {
    const std::string where = " FROM search_steps WHERE ordinal = " + std::to_string(step);
    const double requests = query_double(d, "SELECT requests" + where);
    // The server's window is between its polls (each second, the last at or before each end
    // of the step's window; a poll that timed out on a loaded machine widens or narrows it by
    // a second): the step's requests, give or take a second's worth at each end.
    const double calls = query_double(d, "SELECT server_calls" + where);
    EXPECT_GT(calls, 0.25 * requests) << step << "\n" << out.output;
    EXPECT_LT(calls, 3.0 * requests) << step << "\n" << out.output;
    // Execution alone is below the round trip (buckets are powers of two: up to 2x above).
    const double server_p50 = query_double(d, "SELECT server_p50_us" + where);
    EXPECT_GT(server_p50, 0);
    EXPECT_LE(server_p50, 2 * query_double(d, "SELECT lat_p50_us" + where));
    EXPECT_NE(query_text(d, "SELECT detail" + where).find(", the server's own p90 <= "),
              std::string::npos)
        << out.output;
  }
  EXPECT_NE(out.output.find("the latency is in"), std::string::npos) << out.output;
}

// An objective below what the path can do at any rate (p99 <= 5 µs over loopback): the
// latency stays where it is as the rate halves, and the search says it is a floor, and where
// its time was, instead of halving down to 1 req/s and calling what is left a capacity.
TEST(KvdriveSearch, AnObjectiveBelowThePathsFloorIsSaidToBeAFloor) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("floor.db");
  Outcome out = run_kvdrive(dir, {"run",
                                  "--db",
                                  db,
                                  "--target",
                                  redis.uri(),
                                  "--keys",
                                  "1000",
                                  "--threads",
                                  "1",
                                  "--search",
                                  "--slo",
                                  "p99=5us",
                                  "--search-start",
                                  "2000",
                                  "--search-steps",
                                  "6",
                                  "--duration",
                                  "1s",
                                  "--warmup",
                                  "1s"});
  EXPECT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("no compliant rate: a latency floor, p99"), std::string::npos)
      << out.output;
  EXPECT_NE(out.output.find("the floor is in "), std::string::npos) << out.output;
  Database d = Database::open(db);
  EXPECT_EQ(query_text(d, "SELECT stopped FROM search_results"), "a latency floor");
  EXPECT_LE(query_int(d, "SELECT count(*) FROM search_steps"), 6) << out.output;
}

// A step's --duration is its measured time after its --warmup (docs/reference.md): a warm-up as
// long as the duration is taken, and the step runs both, measuring the duration.
TEST(KvdriveSearch, AStepsDurationIsMeasuredAfterAWarmupAsLong) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("warmup.db");
  Outcome out = run_kvdrive(dir,
                            {"run", "--db", db, "--target", redis.uri(), "--keys", "1000",
                             "--threads", "1", "--search", "--slo", "p90=1s", "--min-achieved",
                             "0.5", "--rates", "2000", "--duration", "1s", "--warmup", "1s",
                             // the client's limits off: this test is about the step's length
                             "--max-client-cpu", "1", "--max-slip", "1h"},
                            120'000);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  // What the run prints is the search's answer, not every step's phase tables: they are in
  // `kvdrive report`, and the output says so.
  EXPECT_NE(out.output.find("capacity search: "), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("every step's tables: kvdrive report --db " + db + " --run 1"),
            std::string::npos)
      << out.output;
  EXPECT_EQ(out.output.find("where the time went"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("write req/s"), std::string::npos) << out.output;
  Database d = Database::open(db);
  ASSERT_EQ(query_int(d, "SELECT count(*) FROM search_steps"), 1) << out.output;
  EXPECT_EQ(query_int(d, "SELECT p.duration_us FROM phases p JOIN search_steps s USING (phase_id)"),
            2'000'000);
  EXPECT_EQ(query_int(d, "SELECT p.warmup_us FROM phases p JOIN search_steps s USING (phase_id)"),
            1'000'000);
  // The measured window: from the end of the warm-up, which is the whole second of the wall
  // clock nearest to start + --warmup (rows are cut at whole seconds), to the phase's end: the
  // duration +- 0.5 s (docs/capacity-search.md).
  const double measured = query_double(d, "SELECT measured_us FROM search_steps");
  EXPECT_GT(measured, 0) << out.output;
  EXPECT_LT(measured, 1.5e6) << out.output;
}

// --processes 2: the parent runs the search, each process runs every step at the step's whole
// rate (its threads take their share of it) and reports it; the parent judges the step on the
// group: requests and achieved rates summed, the processes' histograms added. The counts agree
// with what the store ran; --warmup 0 means no warm-up (every request of a step is measured).
TEST(KvdriveSearch, WithProcessesTheParentJudgesEachStepOnTheGroupsMergedData) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("group.db");
  // p90 of 1 µs: no loopback round trip meets it, so each step fails on the merged p90.
  Outcome out = run_kvdrive(dir, {"run",       "--db",       db,
                                  "--target",  redis.uri(),  "--processes",
                                  "2",         "--keys",     "1000",
                                  "--threads", "1",          "--search",
                                  "--slo",     "p90=1us",    "--rates",
                                  "400,800",   "--duration", "1s",
                                  "--warmup",  "0",          "--max-client-cpu",
                                  "1",         "--max-slip", "1h"},
                            120'000);
  ASSERT_EQ(out.exit_code, 0) << out.output;
  EXPECT_NE(out.output.find("(2 processes) step 2: 800 req/s offered"), std::string::npos)
      << out.output;
  Database d = Database::open(db);
  ASSERT_EQ(query_int(d, "SELECT count(*) FROM runs WHERE process_count = 2"), 2);
  ASSERT_EQ(query_int(d, "SELECT count(*) FROM search_steps"), 2) << out.output;
  // Recorded on process 0's run, with its result.
  EXPECT_EQ(query_int(d,
                      "SELECT count(*) FROM search_steps s JOIN runs r USING (run_id) "
                      "WHERE r.process_index = 0"),
            2);
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM search_results"), 1);
  EXPECT_EQ(query_int(d,
                      "SELECT count(*) FROM search_steps WHERE verdict = 'fail' AND "
                      "limit_reason = 'p90'"),
            2)
      << out.output;
  // --warmup 0: the steps' phases have none.
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM phases WHERE warmup_us <> 0"), 0);
  for (int step = 0; step < 2; ++step) {
    const std::string where = " FROM search_steps WHERE ordinal = " + std::to_string(step);
    // The step's phases of both processes: same phase ordinal (load is 0) in each run.
    const std::string phases =
        "(SELECT phase_id FROM phases WHERE ordinal = " + std::to_string(step + 1) + ")";
    EXPECT_EQ(
        query_int(d, "SELECT count(*) FROM phases WHERE ordinal = " + std::to_string(step + 1)), 2);
    const int64_t requests = query_int(d, "SELECT requests" + where);
    EXPECT_EQ(requests,
              query_int(d, "SELECT SUM(ops) FROM driver_seconds WHERE phase_id IN " + phases))
        << step;
    EXPECT_EQ(requests, query_int(d,
                                  "SELECT SUM(count) FROM latency_buckets WHERE timing = "
                                  "'intended' AND phase_id IN " +
                                      phases))
        << step;
    // The group's rate, not one process's half of it.
    const double offered = query_double(d, "SELECT offered_rate" + where);
    const double achieved = query_double(d, "SELECT achieved_rate" + where);
    EXPECT_GT(achieved, 0.8 * offered) << step << "\n" << out.output;
    EXPECT_LT(achieved, 1.2 * offered) << step << "\n" << out.output;
    // The merged distribution: its max is the larger process's; its p90 lies between theirs.
    EXPECT_DOUBLE_EQ(query_double(d, "SELECT lat_max_us" + where),
                     query_double(d,
                                  "SELECT MAX(max_us) FROM latency_range WHERE timing = "
                                  "'intended' AND phase_id IN " +
                                      phases));
    const double p90 = query_double(d, "SELECT lat_p90_us" + where);
    // (a mixture's quantile is between its parts': each process's gets and sets)
    const std::string each =
        " FROM phase_percentiles WHERE timing = 'intended' AND phase_id IN " + phases;
    EXPECT_GE(p90 * 1.01, query_double(d, "SELECT MIN(p90_us)" + each)) << step;
    EXPECT_LE(p90, 1.01 * query_double(d, "SELECT MAX(p90_us)" + each)) << step;
  }
  // What the store ran: the load and every step, nothing lost or counted twice.
  const long long store_calls =
      redis_command_calls(redis.port(), "get") + redis_command_calls(redis.port(), "set");
  EXPECT_EQ(store_calls, query_int(d, "SELECT SUM(ops) FROM driver_seconds")) << out.output;
}

// SIGTERM to the parent of a --search --processes group alone (a terminal's Ctrl-C reaches
// every process; a supervisor's SIGTERM reaches only the parent): the parent sends no more
// rates and tells the processes to stop, the step under way ends interrupted in both, the steps
// judged before it stay recorded, and the group exits 130 as an interrupted search does. Before,
// the processes ran every remaining step and the group exited 0.
TEST(KvdriveSearch, ASigtermToTheGroupsParentAloneStopsTheSearchInterrupted) {
  StoreServer redis(StoreServer::Kind::redis);
  KV_START_OR_SKIP(redis);
  TempDir dir;
  const std::string db = dir.file("group.db");
  const std::string log = dir.file("kvdrive.log");
  // Ten steps of 3 s that all pass (p90 of an hour): 30 s of steps were the signal not heeded.
  Process p({kKvdrive,
             "run",
             "--db",
             db,
             "--target",
             redis.uri(),
             "--processes",
             "2",
             "--keys",
             "1000",
             "--threads",
             "1",
             "--search",
             "--slo",
             "p90=1h",
             "--rates",
             "100,110,120,130,140,150,160,170,180,190",
             "--duration",
             "3s",
             "--warmup",
             "0",
             "--max-client-cpu",
             "1",
             "--max-slip",
             "1h"},
            log);
  // The first step judged and the second under way (a second of it recorded by both processes).
  ASSERT_TRUE(wait_for_value(db, "SELECT count(*) FROM search_steps", 60'000)) << slurp(log);
  ASSERT_TRUE(wait_for_value(db,
                             "SELECT count(DISTINCT p.phase_id) >= 2 FROM driver_seconds d JOIN "
                             "phases p USING (phase_id) WHERE p.ordinal = 2",
                             30'000))
      << slurp(log);
  ASSERT_EQ(::kill(p.pid(), SIGTERM), 0);
  const auto sent = std::chrono::steady_clock::now();
  const int code = p.wait(20'000);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  ASSERT_NE(code, -1) << "the group did not end within 20 s of SIGTERM\n" << slurp(log);
  EXPECT_EQ(code, 130) << slurp(log);
  EXPECT_LT(seconds, 10) << slurp(log);
  Database d = open_results_db(db);
  // Both processes' runs interrupted (not incomplete: each ended as at a Ctrl-C).
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM runs WHERE status = 'interrupted'"), 2)
      << slurp(log);
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM runs"), 2);
  // The steps done so far are recorded (on process 0's run), the one under way is interrupted
  // in both processes, and no step after it was started.
  const int64_t steps = query_int(d, "SELECT count(*) FROM search_steps");
  EXPECT_GE(steps, 1);
  EXPECT_LT(steps, 10) << slurp(log);
  EXPECT_EQ(query_int(d,
                      "SELECT count(*) FROM search_steps s JOIN runs r USING (run_id) "
                      "WHERE r.process_index = 0"),
            steps);
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM phases WHERE ordinal >= 1 AND status = 'completed'"),
            2 * steps);
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM phases WHERE status = 'interrupted'"), 2)
      << slurp(log);
  EXPECT_EQ(query_int(d, "SELECT MAX(ordinal) FROM phases"), steps + 1);
  // An interrupted search has no result, as without --processes.
  EXPECT_EQ(query_int(d, "SELECT count(*) FROM search_results"), 0);
  // Nothing the store ran is lost: every request is in the file.
  const long long store_calls =
      redis_command_calls(redis.port(), "get") + redis_command_calls(redis.port(), "set");
  EXPECT_EQ(store_calls, query_int(d, "SELECT SUM(ops) FROM driver_seconds")) << slurp(log);
}

TEST(KvdriveSearch, BadSearchOptionsAreOneLineAndExit2WithNothingWritten) {
  TempDir dir;
  const std::string db = dir.file("bad.db");
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--slo", "p99=1ms"}, "--slo needs --search"},
      {{"--search"}, "--search needs an objective"},
      {{"--search", "--slo", "p99=soon"}, "invalid --slo 'p99=soon'"},
      {{"--search", "--slo", "p99=1ms", "--rate", "100"}, "drop --rate"},
      {{"--search", "--rates", "1000,zero"}, "invalid --rates 'zero'"},
      {{"--search", "--slo", "p99=1ms", "--min-achieved", "2"}, "invalid --min-achieved '2'"},
      {{"--search", "--slo", "p99=1ms", "--distress", "heat=1"}, "invalid --distress 'heat=1'"},
      {{"--search", "--slo", "p99=1ms", "--phases", "load"}, "must be read or mixed"},
      {{"--search", "--slo", "p99=1ms", "--processes", "2", "--target", "redis://127.0.0.1:2"},
       "--search with --processes takes one --target"},
      {{"--search", "--slo", "p99=1ms", "--distress", "cgroup-max-anon=2"},
       "invalid --distress 'cgroup-max-anon=2'"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = {"run", "--db", db, "--target", "redis://127.0.0.1:1"};
    args.insert(args.end(), extra.begin(), extra.end());
    Outcome out = run_kvdrive(dir, args);
    EXPECT_EQ(out.exit_code, 2) << out.output;
    EXPECT_NE(out.output.find(message), std::string::npos) << out.output;
    EXPECT_EQ(std::count(out.output.begin(), out.output.end(), '\n'), 1) << out.output;
    EXPECT_FALSE(std::filesystem::exists(db)) << message;
  }
}

}  // namespace
}  // namespace kv::test
