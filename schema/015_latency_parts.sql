-- 015: whose time is it. Each request's latency split into parts (kvdrive's
-- engine/request_stream.hpp split_latency; schema/README.md "Whose time is it"):
--   queue        intended send time -> a slot of the connection's --pipeline window was free
--                (rate mode only: waiting for the store's earlier replies)
--   client_send  -> the send call that took the request's last byte returned (kvdrive's own)
--   wire         -> the kernel received the reply's last segment (SO_TIMESTAMPING): the network
--                both ways plus the store's queueing and execution
--   client_recv  -> kvdrive had read and decoded the reply (kvdrive's own)
-- Histograms of each part per phase and per second, in the buckets of latency_buckets, of the
-- answered requests whose part is known: queue and client_send of every answered request, wire
-- and client_recv of those whose reply was stamped (plain TCP; not TLS). The parts' percentiles
-- do not add up; each request's parts do, to its latency.

CREATE TABLE latency_part_buckets (
  phase_id        INTEGER NOT NULL REFERENCES phases(phase_id),
  op              TEXT NOT NULL,
  part            TEXT NOT NULL CHECK (part IN ('queue', 'client_send', 'wire', 'client_recv')),
  upper_us        REAL NOT NULL,     -- the bucket's upper bound (inclusive), as latency_buckets
  count           INTEGER NOT NULL,
  PRIMARY KEY (phase_id, op, part, upper_us)
) WITHOUT ROWID;

-- The exact count, smallest, largest and mean of each part per phase and op (warm-up left out).
CREATE TABLE latency_part_range (
  phase_id        INTEGER NOT NULL REFERENCES phases(phase_id),
  op              TEXT NOT NULL,
  part            TEXT NOT NULL CHECK (part IN ('queue', 'client_send', 'wire', 'client_recv')),
  count           INTEGER NOT NULL,
  min_us          REAL NOT NULL,
  max_us          REAL NOT NULL,
  mean_us         REAL NOT NULL,
  PRIMARY KEY (phase_id, op, part)
) WITHOUT ROWID;

-- Each second's histogram of each part (the seconds of driver_seconds, warm-up included).
CREATE TABLE second_part_buckets (
  phase_id        INTEGER NOT NULL REFERENCES phases(phase_id),
  ts_us           INTEGER NOT NULL,
  op              TEXT NOT NULL,
  part            TEXT NOT NULL CHECK (part IN ('queue', 'client_send', 'wire', 'client_recv')),
  upper_us        REAL NOT NULL,
  count           INTEGER NOT NULL,
  PRIMARY KEY (phase_id, ts_us, op, part, upper_us)
) WITHOUT ROWID;

-- Percentiles of each part of a whole phase per op, as phase_percentiles: the upper bound of the
-- bucket holding that rank, never above the part's largest value nor below its smallest.
CREATE VIEW phase_part_percentiles AS
WITH c AS (
  SELECT phase_id, op, part, upper_us,
         SUM(count) OVER (PARTITION BY phase_id, op, part ORDER BY upper_us) AS cum,
         SUM(count) OVER (PARTITION BY phase_id, op, part) AS total
  FROM latency_part_buckets),
raw AS (
  SELECT phase_id, op, part,
         MIN(CASE WHEN cum >= 0.50 * total THEN upper_us END) AS p50_us,
         MIN(CASE WHEN cum >= 0.90 * total THEN upper_us END) AS p90_us,
         MIN(CASE WHEN cum >= 0.99 * total THEN upper_us END) AS p99_us,
         MIN(CASE WHEN cum >= 0.999 * total THEN upper_us END) AS p999_us
  FROM c GROUP BY phase_id, op, part)
SELECT raw.phase_id, raw.op, raw.part, r.count, r.mean_us,
       MAX(MIN(p50_us, COALESCE(r.max_us, p50_us)), COALESCE(r.min_us, 0)) AS p50_us,
       MAX(MIN(p90_us, COALESCE(r.max_us, p90_us)), COALESCE(r.min_us, 0)) AS p90_us,
       MAX(MIN(p99_us, COALESCE(r.max_us, p99_us)), COALESCE(r.min_us, 0)) AS p99_us,
       MAX(MIN(p999_us, COALESCE(r.max_us, p999_us)), COALESCE(r.min_us, 0)) AS p999_us,
       r.max_us
FROM raw
LEFT JOIN latency_part_range r USING (phase_id, op, part);

-- Where the time went, by latency: each phase and op's fully split requests (every part known)
-- in bins of their end-to-end latency (half powers of two, warm-up left out), with the sums of
-- the latency and of each part. The mean parts of the bin that holds a percentile add up to
-- the latency there, so "of the p99, how much was kvdrive's" is plain SQL.
CREATE TABLE latency_part_bins (
  phase_id        INTEGER NOT NULL REFERENCES phases(phase_id),
  op              TEXT NOT NULL,
  upper_us        REAL NOT NULL,     -- the bin's largest latency
  count           INTEGER NOT NULL,
  latency_us      REAL NOT NULL,     -- sums over the bin's requests, µs
  queue_us        REAL NOT NULL,
  client_send_us  REAL NOT NULL,
  wire_us         REAL NOT NULL,
  client_recv_us  REAL NOT NULL,
  PRIMARY KEY (phase_id, op, upper_us)
) WITHOUT ROWID;

-- A capacity-search step: kvdrive's own share (client send + client recv) of the requests
-- around the objective's first latency percentile, %. A step that misses its objective only by
-- that share is client-bound (limit_reason 'client-latency'), not failed.
ALTER TABLE search_steps ADD COLUMN client_share_pct REAL;

-- Every due request is accounted for: in rate mode, the requests due before a phase's end that
-- never left (sent late up to the request timeout past the end, then given up) are counted in
-- the second they were given up, per op; NULL in closed loop. ops + dropped = the requests due.
ALTER TABLE driver_seconds ADD COLUMN dropped INTEGER;
