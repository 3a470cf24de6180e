-- When did the store start swapping, and what were write throughput and p99 in the minute
-- before and after? (latest run; the store process matched by pid via target_instances; req/s
-- counts answered requests per wall second, stalled seconds included)
-- Usage: sqlite3 -header -column results.db < schema/queries/swap_onset.sql
WITH onset AS (
  SELECT ti.target_id, MIN(s.ts_us) AS ts_us
  FROM process_samples s JOIN target_instances ti ON ti.instance_id = s.instance_id
  WHERE s.swap_kib > 0
  GROUP BY ti.target_id
)
SELECT t.uri AS store,
       strftime('%H:%M:%S', o.ts_us / 1e6, 'unixepoch') AS swap_began_utc,
       CASE WHEN d.ts_us < o.ts_us THEN 'before' ELSE 'after' END AS minute,
       d.op,
       round(SUM(COALESCE(d.ok, d.ops - d.errors - d.timeouts)) * 1e6 / SUM(d.interval_us)) AS req_per_s,
       round(MAX(d.lat_p99_us)) AS worst_p99_us,
       SUM(d.errors + d.timeouts) AS failed
FROM onset o
JOIN targets t ON t.target_id = o.target_id
JOIN phases p ON p.target_id = t.target_id
JOIN driver_seconds d ON d.phase_id = p.phase_id
WHERE p.run_id = (SELECT max(run_id) FROM runs)
  AND d.ts_us BETWEEN o.ts_us - 60000000 AND o.ts_us + 60000000
GROUP BY t.target_id, minute, d.op
ORDER BY t.target_id, minute DESC, d.op DESC;
