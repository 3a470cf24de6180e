-- kvbench schema, migration 004: time as true as counts. Every second of a phase has a row per
-- op the phase sends (ops 0 when nothing completed), rows sit on whole seconds of the common
-- time base, and req/s counts answered requests per wall second. Column meanings: schema/README.md.

-- Requests that got an answer (ok, hit or miss) = ops - errors - timeouts.
ALTER TABLE driver_seconds ADD COLUMN ok INTEGER;
-- Rate mode: how late requests were sent against their schedule (actual - intended send); else NULL.
ALTER TABLE driver_seconds ADD COLUMN slip_p50_us REAL;
ALTER TABLE driver_seconds ADD COLUMN slip_p99_us REAL;
ALTER TABLE driver_seconds ADD COLUMN slip_max_us REAL;
-- Rate mode: CPU time the worker threads spent spinning for a send time (left out of
-- busiest_thread_cpu_pct, since the thread had nothing else to do).
ALTER TABLE client_seconds ADD COLUMN spin_us INTEGER;
-- Wall minus monotonic clock at the collection of the row, in microseconds: kvdrive re-anchors
-- its monotonic clock to the wall clock every second, and the change of this figure between
-- rows is how far the wall clock was slewed or stepped meanwhile.
ALTER TABLE client_seconds ADD COLUMN clock_offset_us INTEGER;

-- The exact count, smallest, largest and mean latency of a phase per op and timing (the buckets
-- give percentiles to 0.8 %; these bound them, so no percentile exceeds the observed maximum).
CREATE TABLE latency_range (
  phase_id        INTEGER NOT NULL REFERENCES phases(phase_id),
  op              TEXT NOT NULL,
  timing          TEXT NOT NULL CHECK (timing IN ('sent', 'intended')),
  count           INTEGER NOT NULL,
  min_us          REAL NOT NULL,
  max_us          REAL NOT NULL,
  mean_us         REAL NOT NULL,
  PRIMARY KEY (phase_id, op, timing)
);

DROP VIEW phase_report;
DROP VIEW step_summary;
DROP VIEW store_summary;
DROP VIEW phase_summary;
DROP VIEW phase_percentiles;
DROP VIEW timeline;
DROP VIEW group_summary;

-- Latency percentiles of a whole phase per op and timing, from its histogram rows: the upper
-- bound of the bucket holding that rank (at most 0.8 % above the true value), but never above
-- the largest latency observed nor below the smallest (latency_range, where recorded).
CREATE VIEW phase_percentiles AS
WITH c AS (
  SELECT phase_id, op, timing, upper_us,
         SUM(count) OVER (PARTITION BY phase_id, op, timing ORDER BY upper_us) AS cum,
         SUM(count) OVER (PARTITION BY phase_id, op, timing) AS total
  FROM latency_buckets),
raw AS (
  SELECT phase_id, op, timing,
         MIN(CASE WHEN cum >= 0.50 * total THEN upper_us END) AS p50_us,
         MIN(CASE WHEN cum >= 0.90 * total THEN upper_us END) AS p90_us,
         MIN(CASE WHEN cum >= 0.99 * total THEN upper_us END) AS p99_us,
         MIN(CASE WHEN cum >= 0.999 * total THEN upper_us END) AS p999_us
  FROM c GROUP BY phase_id, op, timing)
SELECT raw.phase_id, raw.op, raw.timing,
       MAX(MIN(p50_us, COALESCE(r.max_us, p50_us)), COALESCE(r.min_us, 0)) AS p50_us,
       MAX(MIN(p90_us, COALESCE(r.max_us, p90_us)), COALESCE(r.min_us, 0)) AS p90_us,
       MAX(MIN(p99_us, COALESCE(r.max_us, p99_us)), COALESCE(r.min_us, 0)) AS p99_us,
       MAX(MIN(p999_us, COALESCE(r.max_us, p999_us)), COALESCE(r.min_us, 0)) AS p999_us
FROM raw
LEFT JOIN latency_range r USING (phase_id, op, timing);

-- Per phase and op: totals and rates over the phase's wall time (warm-up left out). Every second
-- of a phase has a row per op it sends, so `seconds` is wall time from the phase's start to its
-- end, stalls included. req_per_s counts answered requests (ok, hit, miss) per wall second;
-- failed_per_s beside it counts errors + timeouts; ops is every completed request (what the
-- server counted).
CREATE VIEW phase_summary AS
WITH pp AS MATERIALIZED (SELECT * FROM phase_percentiles)
SELECT p.run_id, p.phase_id, t.target_id, t.uri AS store, t.protocol, p.step, p.name AS phase,
       p.kind, p.threads, p.connections,
       d.op,
       SUM(d.ops) AS ops,
       SUM(COALESCE(d.ok, d.ops - d.errors - d.timeouts)) AS ok,
       SUM(d.errors) AS errors,
       SUM(d.timeouts) AS timeouts,
       SUM(d.hits) AS hits,
       SUM(d.misses) AS misses,
       SUM(d.wrong) AS wrong,
       SUM(d.late) AS late,
       SUM(d.interval_us) / 1e6 AS seconds,
       SUM(COALESCE(d.ok, d.ops - d.errors - d.timeouts)) * 1e6 / NULLIF(SUM(d.interval_us), 0)
         AS req_per_s,
       SUM(d.errors + d.timeouts) * 1e6 / NULLIF(SUM(d.interval_us), 0) AS failed_per_s,
       (SUM(d.bytes_out) + SUM(d.bytes_in)) * 1e6 / NULLIF(SUM(d.interval_us), 0) / 1048576.0
         AS mib_per_s,
       SUM(d.lat_mean_us * d.ops) / NULLIF(SUM(CASE WHEN d.lat_mean_us IS NOT NULL THEN d.ops END), 0)
         AS lat_mean_us,
       MIN(pp.p50_us, MAX(d.lat_max_us)) AS lat_p50_us,
       MIN(pp.p90_us, MAX(d.lat_max_us)) AS lat_p90_us,
       MIN(pp.p99_us, MAX(d.lat_max_us)) AS lat_p99_us,
       MIN(pp.p999_us, MAX(d.lat_max_us)) AS lat_p999_us,
       MAX(d.lat_max_us) AS lat_max_us,
       p.status
FROM phases p
JOIN targets t ON t.target_id = p.target_id
JOIN driver_seconds d ON d.phase_id = p.phase_id AND d.warmup = 0
LEFT JOIN pp ON pp.phase_id = p.phase_id AND pp.op = d.op
            AND pp.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END
GROUP BY p.phase_id, d.op;

-- Shaped like the published tables: one row per store. write_req_per_s: the sets of its load
-- phases; read_req_per_s: the gets of its read phases; mixed_req_per_s: every answered request
-- of its mixed phases (sets and gets together) — each per wall second of those phases.
CREATE VIEW store_summary AS
WITH ps AS MATERIALIZED (SELECT * FROM phase_summary),
ph AS (SELECT target_id, kind, MAX(seconds) AS seconds, SUM(ok) AS ok FROM ps GROUP BY phase_id)
SELECT run_id, target_id, store, protocol,
       SUM(CASE WHEN kind = 'load' AND op = 'set' THEN ok END) * 1e6 /
         NULLIF(SUM(CASE WHEN kind = 'load' AND op = 'set' THEN seconds * 1e6 END), 0) AS write_req_per_s,
       SUM(CASE WHEN kind = 'read' AND op = 'get' THEN ok END) * 1e6 /
         NULLIF(SUM(CASE WHEN kind = 'read' AND op = 'get' THEN seconds * 1e6 END), 0) AS read_req_per_s,
       (SELECT SUM(ph.ok) * 1e6 / NULLIF(SUM(ph.seconds * 1e6), 0) FROM ph
         WHERE ph.target_id = ps.target_id AND ph.kind = 'mixed') AS mixed_req_per_s,
       MAX(CASE WHEN kind = 'load' AND op = 'set' THEN lat_p99_us END) AS write_p99_us,
       MAX(CASE WHEN kind = 'read' AND op = 'get' THEN lat_p99_us END) AS read_p99_us,
       MAX(CASE WHEN kind = 'mixed' THEN lat_p99_us END) AS mixed_p99_us,
       SUM(errors) + SUM(timeouts) AS errors
FROM ps
GROUP BY run_id, target_id;

-- Scenario steps (a value size, a concurrency level ...): per step and store, write and read
-- req/s (answered per wall second) and p99, so sweeps read like the published tables. Here
-- write is every set and read every get of the step's phases (a step runs one shape).
CREATE VIEW step_summary AS
SELECT run_id, step, target_id, store, protocol, MIN(phase_id) AS first_phase_id,
       MAX(threads) AS threads, MAX(connections) AS connections,
       SUM(CASE WHEN op = 'set' THEN ok END) * 1e6 /
         NULLIF(SUM(CASE WHEN op = 'set' THEN seconds * 1e6 END), 0) AS write_req_per_s,
       SUM(CASE WHEN op = 'get' THEN ok END) * 1e6 /
         NULLIF(SUM(CASE WHEN op = 'get' THEN seconds * 1e6 END), 0) AS read_req_per_s,
       SUM(CASE WHEN op = 'set' THEN mib_per_s * seconds END) /
         NULLIF(SUM(CASE WHEN op = 'set' THEN seconds END), 0) AS write_mib_per_s,
       SUM(CASE WHEN op = 'get' THEN mib_per_s * seconds END) /
         NULLIF(SUM(CASE WHEN op = 'get' THEN seconds END), 0) AS read_mib_per_s,
       MAX(CASE WHEN op = 'set' THEN lat_p99_us END) AS write_p99_us,
       MAX(CASE WHEN op = 'get' THEN lat_p99_us END) AS read_p99_us,
       SUM(CASE WHEN op = 'set' THEN lat_mean_us * ops END) /
         NULLIF(SUM(CASE WHEN op = 'set' THEN ops END), 0) AS write_mean_us,
       SUM(CASE WHEN op = 'get' THEN lat_mean_us * ops END) /
         NULLIF(SUM(CASE WHEN op = 'get' THEN ops END), 0) AS read_mean_us,
       SUM(errors) + SUM(timeouts) AS errors
FROM phase_summary
GROUP BY run_id, step, target_id;

-- One row per second and op of the driver, beside what kvmon and the store saw in that second:
-- the store process's sample whose tick fell in the row's second (kvmon ticks on whole
-- multiples of its interval on the same wall clock: the sample with scheduled_ts_us in
-- [ts_us, ts_us + interval_us), the last one if several, so each sample belongs to one row),
-- the host's likewise, and the store's latest used_memory. req_per_s: answered per wall second.
CREATE VIEW timeline AS
WITH ti AS MATERIALIZED (SELECT target_id, instance_id FROM target_instances)
SELECT d.ts_us, p.run_id, t.target_id, t.uri AS store, p.phase_id, p.name AS phase, d.op,
       COALESCE(d.ok, d.ops - d.errors - d.timeouts) * 1e6 / d.interval_us AS req_per_s,
       (d.errors + d.timeouts) * 1e6 / d.interval_us AS failed_per_s,
       d.lat_p99_us, d.errors + d.timeouts AS failed,
       ps.rss_kib, ps.swap_kib, ps.major_faults,
       ps.cpu_user_us + ps.cpu_system_us AS cpu_us, ps.io_write_bytes,
       hs.load1, hs.swap_total_kib - hs.swap_free_kib AS host_swap_used_kib, hs.pswpin, hs.pswpout,
       (SELECT ss.value FROM store_stats ss
         WHERE ss.target_id = t.target_id AND ss.name = 'used_memory'
           AND ss.ts_us < d.ts_us + d.interval_us
         ORDER BY ss.ts_us DESC LIMIT 1) AS store_used_memory
FROM driver_seconds d
JOIN phases p ON p.phase_id = d.phase_id
JOIN targets t ON t.target_id = p.target_id
LEFT JOIN process_samples ps ON ps.rowid = (
  SELECT s.rowid FROM process_samples s
  WHERE s.instance_id IN (SELECT ti.instance_id FROM ti WHERE ti.target_id = t.target_id)
    AND s.scheduled_ts_us >= d.ts_us AND s.scheduled_ts_us < d.ts_us + d.interval_us
  ORDER BY s.scheduled_ts_us DESC LIMIT 1)
LEFT JOIN host_samples hs ON hs.rowid = (
  SELECT h.rowid FROM host_samples h
  WHERE h.scheduled_ts_us >= d.ts_us AND h.scheduled_ts_us < d.ts_us + d.interval_us
  ORDER BY h.scheduled_ts_us DESC LIMIT 1);

-- phase_summary shaped like the published tables, with the server side: load average at the
-- phase's end, and the store process's peak RSS and swap during the phase.
CREATE VIEW phase_report AS
WITH ti AS MATERIALIZED (SELECT target_id, instance_id FROM target_instances)
SELECT ps.*,
       h.load1, h.load5, h.load15,
       (SELECT MAX(s.rss_kib) FROM process_samples s
         JOIN ti ON ti.instance_id = s.instance_id AND ti.target_id = ps.target_id
         WHERE s.ts_us BETWEEN p.started_ts_us AND COALESCE(p.ended_ts_us, s.ts_us)) AS peak_rss_kib,
       (SELECT MAX(s.swap_kib) FROM process_samples s
         JOIN ti ON ti.instance_id = s.instance_id AND ti.target_id = ps.target_id
         WHERE s.ts_us BETWEEN p.started_ts_us AND COALESCE(p.ended_ts_us, s.ts_us)) AS peak_swap_kib,
       (SELECT CASE WHEN COUNT(*) >= 2 THEN
                 (MAX(s.cpu_user_us + s.cpu_system_us) - MIN(s.cpu_user_us + s.cpu_system_us)) / 1e6
               END
          FROM process_samples s
          JOIN ti ON ti.instance_id = s.instance_id AND ti.target_id = ps.target_id
         WHERE s.ts_us BETWEEN p.started_ts_us AND COALESCE(p.ended_ts_us, s.ts_us)) AS store_cpu_s,
       (SELECT SUM(c.cpu_user_us) / 1e6 FROM client_seconds c WHERE c.phase_id = p.phase_id)
         AS client_cpu_user_s,
       (SELECT SUM(c.cpu_system_us) / 1e6 FROM client_seconds c WHERE c.phase_id = p.phase_id)
         AS client_cpu_system_s
FROM phase_summary ps
JOIN phases p ON p.phase_id = ps.phase_id
LEFT JOIN host_samples h ON h.rowid = (
  SELECT hh.rowid FROM host_samples hh WHERE hh.ts_us <= COALESCE(p.ended_ts_us, p.started_ts_us)
  ORDER BY hh.ts_us DESC LIMIT 1);

-- Runs made by several kvdrive processes together (kvdrive run --processes N): per group, store
-- and op, the answered requests of all processes over the group's wall-clock time for that
-- phase kind.
CREATE VIEW group_summary AS
SELECT r.run_group, MAX(r.process_count) AS processes, t.uri AS store, t.protocol,
       p.kind, d.op,
       COUNT(DISTINCT r.run_id) AS runs,
       SUM(d.ops) AS ops,
       SUM(COALESCE(d.ok, d.ops - d.errors - d.timeouts)) AS ok,
       SUM(d.errors + d.timeouts) AS failed,
       (MAX(d.ts_us + d.interval_us) - MIN(d.ts_us)) / 1e6 AS wall_seconds,
       SUM(COALESCE(d.ok, d.ops - d.errors - d.timeouts)) * 1e6 /
         NULLIF(MAX(d.ts_us + d.interval_us) - MIN(d.ts_us), 0) AS req_per_s
FROM runs r
JOIN phases p ON p.run_id = r.run_id
JOIN targets t ON t.target_id = p.target_id
JOIN driver_seconds d ON d.phase_id = p.phase_id AND d.warmup = 0
WHERE r.run_group IS NOT NULL
GROUP BY r.run_group, t.uri, p.kind, d.op;
