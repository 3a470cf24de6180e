-- Per phase and operation of the latest run: requests, rates, MiB/s, latency and outcomes.
-- seconds is wall time (stalls included); req_per_s counts answered requests per wall second,
-- failed_per_s errors + timeouts. Usage: sqlite3 -header -column results.db < schema/queries/phase_summary.sql
SELECT store, phase, op, ops, ok, round(seconds, 1) AS seconds, round(req_per_s) AS req_per_s,
       round(failed_per_s) AS failed_per_s,
       round(mib_per_s, 2) AS mib_per_s, round(lat_mean_us) AS mean_us,
       round(lat_p50_us) AS p50_us, round(lat_p99_us) AS p99_us, round(lat_max_us) AS max_us,
       hits, misses, errors, timeouts, status
FROM phase_summary
WHERE run_id = (SELECT max(run_id) FROM runs)
ORDER BY phase_id, op DESC;
