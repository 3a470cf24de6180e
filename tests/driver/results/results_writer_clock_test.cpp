// The results writer reads the times it stamps (run ends, events) from its ClockSource.
#include <gtest/gtest.h>

#include "fake_clock.hpp"
#include "kvbench/schema.hpp"
#include "results/results_writer.hpp"
#include "servers.hpp"

namespace kv::drive {
namespace {

TEST(ResultsWriterClock, RunEndsAndEventsAreStampedByTheInjectedClock) {
  test::TempDir dir;
  Database db = open_results_db(dir.file("r.db"));
  const int64_t t0 = 1'780'000'000'123'456;
  test::FakeClock clock(t0);
  ResultsWriter writer(db, clock);
  const int64_t run =
      writer.begin_run(RunInfo{"n", "kvdrive run", "{}", t0, "", 1.0, "", 0, 1, "", 0, 0});
  clock.advance_by_us(2'500'000);
  writer.event(run, "client_bound", "a message");
  clock.step_wall_us(-10'000'000);  // a wall clock stepped back is stamped as it reads
  writer.end_run(run, "completed", "");

  auto ev = db.prepare("SELECT ts_us FROM events WHERE run_id = ? AND kind = 'client_bound'");
  ev.bind(1, run);
  ASSERT_TRUE(ev.step());
  EXPECT_EQ(ev.column_int(0), t0 + 2'500'000);
  auto r = db.prepare("SELECT ended_ts_us, status FROM runs WHERE run_id = ?");
  r.bind(1, run);
  ASSERT_TRUE(r.step());
  EXPECT_EQ(r.column_int(0), t0 + 2'500'000 - 10'000'000);
}

}  // namespace
}  // namespace kv::drive
