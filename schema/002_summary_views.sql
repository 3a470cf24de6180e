-- kvbench schema, migration 002: views that shape results like the published comparisons.

-- Per phase and op: totals and rates over the phase's measured seconds.
CREATE VIEW phase_summary AS
SELECT p.run_id, p.phase_id, t.target_id, t.uri AS store, t.protocol, p.name AS phase, p.kind,
       d.op,
       SUM(d.ops) AS ops,
       SUM(d.errors) AS errors,
       SUM(d.timeouts) AS timeouts,
       SUM(d.hits) AS hits,
       SUM(d.misses) AS misses,
       SUM(d.interval_us) / 1e6 AS seconds,
       SUM(d.ops) * 1e6 / NULLIF(SUM(d.interval_us), 0) AS req_per_s,
       (SUM(d.bytes_out) + SUM(d.bytes_in)) * 1e6 / NULLIF(SUM(d.interval_us), 0) / 1048576.0
         AS mib_per_s,
       SUM(d.lat_mean_us * d.ops) / NULLIF(SUM(CASE WHEN d.lat_mean_us IS NOT NULL THEN d.ops END), 0)
         AS lat_mean_us,
       MAX(d.lat_max_us) AS lat_max_us
FROM phases p
JOIN targets t ON t.target_id = p.target_id
JOIN driver_seconds d ON d.phase_id = p.phase_id
GROUP BY p.phase_id, d.op;

-- Shaped like the published tables: one row per store, write and read req/s.
CREATE VIEW store_summary AS
SELECT run_id, target_id, store, protocol,
       SUM(CASE WHEN op = 'set' THEN ops END) * 1e6 /
         NULLIF(SUM(CASE WHEN op = 'set' THEN seconds * 1e6 END), 0) AS write_req_per_s,
       SUM(CASE WHEN op = 'get' THEN ops END) * 1e6 /
         NULLIF(SUM(CASE WHEN op = 'get' THEN seconds * 1e6 END), 0) AS read_req_per_s,
       SUM(errors) AS errors
FROM phase_summary
GROUP BY run_id, target_id;
