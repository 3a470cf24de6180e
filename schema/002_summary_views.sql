-- kvbench schema, migration 002: views that shape results like the published comparisons.

-- Latency percentiles of a whole phase per op and timing, from its histogram rows (each value
-- is the upper bound of the bucket holding that rank: at most 0.8 % above the true value).
CREATE VIEW phase_percentiles AS
WITH c AS (
  SELECT phase_id, op, timing, upper_us,
         SUM(count) OVER (PARTITION BY phase_id, op, timing ORDER BY upper_us) AS cum,
         SUM(count) OVER (PARTITION BY phase_id, op, timing) AS total
  FROM latency_buckets)
SELECT phase_id, op, timing,
       MIN(CASE WHEN cum >= 0.50 * total THEN upper_us END) AS p50_us,
       MIN(CASE WHEN cum >= 0.90 * total THEN upper_us END) AS p90_us,
       MIN(CASE WHEN cum >= 0.99 * total THEN upper_us END) AS p99_us,
       MIN(CASE WHEN cum >= 0.999 * total THEN upper_us END) AS p999_us
FROM c
GROUP BY phase_id, op, timing;

-- Per phase and op: totals and rates over the phase's measured seconds. The percentiles are
-- computed once for all phases (a correlated lookup per row recomputed the window each time).
CREATE VIEW phase_summary AS
WITH pp AS MATERIALIZED (SELECT * FROM phase_percentiles)
SELECT p.run_id, p.phase_id, t.target_id, t.uri AS store, t.protocol, p.step, p.name AS phase,
       p.kind, p.threads, p.connections,
       d.op,
       SUM(d.ops) AS ops,
       SUM(d.errors) AS errors,
       SUM(d.timeouts) AS timeouts,
       SUM(d.hits) AS hits,
       SUM(d.misses) AS misses,
       SUM(d.wrong) AS wrong,
       SUM(d.late) AS late,
       SUM(d.interval_us) / 1e6 AS seconds,
       SUM(d.ops) * 1e6 / NULLIF(SUM(d.interval_us), 0) AS req_per_s,
       (SUM(d.bytes_out) + SUM(d.bytes_in)) * 1e6 / NULLIF(SUM(d.interval_us), 0) / 1048576.0
         AS mib_per_s,
       SUM(d.lat_mean_us * d.ops) / NULLIF(SUM(CASE WHEN d.lat_mean_us IS NOT NULL THEN d.ops END), 0)
         AS lat_mean_us,
       pp.p50_us AS lat_p50_us,
       pp.p99_us AS lat_p99_us,
       MAX(d.lat_max_us) AS lat_max_us,
       p.status
FROM phases p
JOIN targets t ON t.target_id = p.target_id
JOIN driver_seconds d ON d.phase_id = p.phase_id AND d.warmup = 0
LEFT JOIN pp ON pp.phase_id = p.phase_id AND pp.op = d.op
            AND pp.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END
GROUP BY p.phase_id, d.op;

-- Shaped like the published tables: one row per store, write and read req/s.
CREATE VIEW store_summary AS
SELECT run_id, target_id, store, protocol,
       SUM(CASE WHEN op = 'set' THEN ops END) * 1e6 /
         NULLIF(SUM(CASE WHEN op = 'set' THEN seconds * 1e6 END), 0) AS write_req_per_s,
       SUM(CASE WHEN op = 'get' THEN ops END) * 1e6 /
         NULLIF(SUM(CASE WHEN op = 'get' THEN seconds * 1e6 END), 0) AS read_req_per_s,
       MAX(CASE WHEN op = 'set' THEN lat_p99_us END) AS write_p99_us,
       MAX(CASE WHEN op = 'get' THEN lat_p99_us END) AS read_p99_us,
       SUM(errors) + SUM(timeouts) AS errors
FROM phase_summary
GROUP BY run_id, target_id;

-- Scenario steps (a value size, a concurrency level ...): per step and store, write and read
-- req/s and p99, so sweeps read like the published tables.
CREATE VIEW step_summary AS
SELECT run_id, step, target_id, store, protocol, MIN(phase_id) AS first_phase_id,
       MAX(threads) AS threads, MAX(connections) AS connections,
       SUM(CASE WHEN op = 'set' THEN ops END) * 1e6 /
         NULLIF(SUM(CASE WHEN op = 'set' THEN seconds * 1e6 END), 0) AS write_req_per_s,
       SUM(CASE WHEN op = 'get' THEN ops END) * 1e6 /
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

-- Which monitored process is each target's store: matched by the pid the store reports about
-- itself (Redis INFO process_id, memcached stats pid), so a timeline never mixes up two stores.
CREATE VIEW target_instances AS
SELECT DISTINCT t.target_id, i.instance_id, i.pid, i.host
FROM targets t
JOIN store_stats ss ON ss.target_id = t.target_id AND ss.name IN ('process_id', 'pid')
JOIN process_instances i ON i.pid = CAST(ss.value AS INTEGER) AND i.parent_instance_id IS NULL;

-- One row per second and op of the driver, beside what kvmon and the store saw in that second:
-- the store process's latest sample (RSS, swap, cumulative major faults, CPU and write bytes),
-- the host's (load, swap used, cumulative pages swapped in/out) and the store's used_memory.
CREATE VIEW timeline AS
WITH ti AS MATERIALIZED (SELECT target_id, instance_id FROM target_instances)
SELECT d.ts_us, p.run_id, t.target_id, t.uri AS store, p.phase_id, p.name AS phase, d.op,
       d.ops * 1e6 / d.interval_us AS req_per_s, d.lat_p99_us, d.errors + d.timeouts AS failed,
       ps.rss_kib, ps.swap_kib, ps.major_faults,
       ps.cpu_user_us + ps.cpu_system_us AS cpu_us, ps.io_write_bytes,
       hs.load1, hs.swap_total_kib - hs.swap_free_kib AS host_swap_used_kib, hs.pswpin, hs.pswpout,
       (SELECT ss.value FROM store_stats ss
         WHERE ss.target_id = t.target_id AND ss.name = 'used_memory'
           AND ss.ts_us <= d.ts_us + d.interval_us
         ORDER BY ss.ts_us DESC LIMIT 1) AS store_used_memory
FROM driver_seconds d
JOIN phases p ON p.phase_id = d.phase_id
JOIN targets t ON t.target_id = p.target_id
LEFT JOIN process_samples ps ON ps.rowid = (
  SELECT s.rowid FROM process_samples s
  WHERE s.instance_id IN (SELECT ti.instance_id FROM ti WHERE ti.target_id = t.target_id)
    AND s.ts_us <= d.ts_us + d.interval_us
  ORDER BY s.ts_us DESC LIMIT 1)
LEFT JOIN host_samples hs ON hs.rowid = (
  SELECT h.rowid FROM host_samples h
  WHERE h.ts_us <= d.ts_us + d.interval_us
  ORDER BY h.ts_us DESC LIMIT 1);

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
-- and op, the requests of all processes over the group's wall-clock time for that phase kind.
CREATE VIEW group_summary AS
SELECT r.run_group, MAX(r.process_count) AS processes, t.uri AS store, t.protocol,
       p.kind, d.op,
       COUNT(DISTINCT r.run_id) AS runs,
       SUM(d.ops) AS ops,
       SUM(d.errors + d.timeouts) AS failed,
       (MAX(d.ts_us + d.interval_us) - MIN(d.ts_us)) / 1e6 AS wall_seconds,
       SUM(d.ops) * 1e6 / NULLIF(MAX(d.ts_us + d.interval_us) - MIN(d.ts_us), 0) AS req_per_s
FROM runs r
JOIN phases p ON p.run_id = r.run_id
JOIN targets t ON t.target_id = p.target_id
JOIN driver_seconds d ON d.phase_id = p.phase_id AND d.warmup = 0
WHERE r.run_group IS NOT NULL
GROUP BY r.run_group, t.uri, p.kind, d.op;
