// What a search step reads back from the results file of the store's side: its own latency
// (LATENCY HISTOGRAM rows of store_stats) over the step's window; the client's thread figure.
#include "search/search_run.hpp"

#include <gtest/gtest.h>

#include "engine/phase_runner.hpp"
#include "kvbench/schema.hpp"
#include "servers.hpp"

namespace kv::drive {
namespace {

// A results file with one run and one Redis target (target_id 1).
Database file_with_a_target(const test::TempDir& dir) {
  Database db = open_results_db(dir.file("r.db"));
  db.exec(
      "INSERT INTO runs (run_id, started_ts_us, command_line, kvdrive_version, client_host, "
      "client_pid) VALUES (1, 0, 'kvdrive run', 'test', 'h', 1);"
      "INSERT INTO targets (target_id, run_id, ordinal, uri, protocol) "
      "VALUES (1, 1, 0, 'redis://x', 'redis')");
  return db;
}

void poll(Database& db, int64_t ts_us, const std::string& name, double value) {
  db.prepare("INSERT INTO store_stats (target_id, ts_us, name, value) VALUES (1, ?1, ?2, ?3)")
      .bind(1, ts_us)
      .bind(2, name)
      .bind(3, value)
      .run();
}

// 10,000 slow gets (<= 1024 µs) in the load before the step, no poll before the step's window
// (from 10 s to 20 s): its first poll, 0.5 s in, is the baseline, so the window has only the
// step's 100 fast gets (<= 8 µs), not every call since the server started.
TEST(SearchRunServerLatency, WithNoPollBeforeTheWindowItStartsAtItsFirstPoll) {
  test::TempDir dir;
  Database db = file_with_a_target(dir);
  poll(db, 10'500'000, "latency_histogram_usec_get_8", 0);
  poll(db, 10'500'000, "latency_histogram_usec_get_1024", 10'000);
  poll(db, 19'500'000, "latency_histogram_usec_get_8", 100);
  poll(db, 19'500'000, "latency_histogram_usec_get_1024", 10'100);
  auto s = read_server_latency(db, 1, 10'000'000, 20'000'000);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->calls, 100);
  EXPECT_EQ(s->p99_us, 8);
  // A poll before the window is the baseline, as before.
  poll(db, 9'000'000, "latency_histogram_usec_get_8", 0);
  poll(db, 9'000'000, "latency_histogram_usec_get_1024", 9'990);
  s = read_server_latency(db, 1, 10'000'000, 20'000'000);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->calls, 110);
}

// One poll in the window and none before it: no baseline, so unknown (not every call since the
// server started).
TEST(SearchRunServerLatency, ASinglePollWithNoneBeforeIsUnknown) {
  test::TempDir dir;
  Database db = file_with_a_target(dir);
  poll(db, 15'000'000, "latency_histogram_usec_get_1024", 10'000);
  EXPECT_FALSE(read_server_latency(db, 1, 10'000'000, 20'000'000));
  EXPECT_FALSE(read_server_latency(db, 1, 20'000'000, 30'000'000));  // no poll after it
}

// A step's "running or waiting for a CPU" figure is a share of a second, never more: the second
// in which a 1.95 s wait ended (schedstat adds it then) read 195 % before.
TEST(ThreadWanted, AShareOfTheIntervalLessSpinningAtMostAll) {
  EXPECT_DOUBLE_EQ(thread_wanted_fraction(500'000'000, 100'000'000, 1.0), 0.4);
  EXPECT_DOUBLE_EQ(thread_wanted_fraction(250'000'000, 0, 0.5), 0.5);
  EXPECT_EQ(thread_wanted_fraction(1'950'000'000, 0, 1.0), 1.0);
  EXPECT_EQ(thread_wanted_fraction(100, 200, 1.0), 0);  // spin counted beyond: none
  EXPECT_EQ(thread_wanted_fraction(100, 0, 0), 0);      // no interval
}

}  // namespace
}  // namespace kv::drive
