-- 008: each second's latency histogram, per phase, op and timing, as sparse bucket rows (one per
-- non-empty bucket, the buckets of latency_buckets), so percentiles over any set of seconds --
-- a window, a phase, several hosts' runs of one instant -- are plain SQL, exact to one bucket.

CREATE TABLE second_latency_buckets (
  phase_id        INTEGER NOT NULL REFERENCES phases(phase_id),
  ts_us           INTEGER NOT NULL,  -- the second: driver_seconds.ts_us of the same phase and op
  op              TEXT NOT NULL,
  timing          TEXT NOT NULL CHECK (timing IN ('sent', 'intended')),
  upper_us        REAL NOT NULL,     -- the bucket's upper bound (inclusive), as latency_buckets
  count           INTEGER NOT NULL,
  PRIMARY KEY (phase_id, ts_us, op, timing, upper_us)
) WITHOUT ROWID;
