-- The latest run second by second: throughput and p99 beside the store's RSS, swap and major
-- faults (per second, from the cumulative counter), the host's load and swap-ins, and Redis's
-- own used_memory. Usage: sqlite3 -header -column results.db < schema/queries/timeline.sql
SELECT strftime('%H:%M:%S', ts_us / 1e6, 'unixepoch') AS time_utc, store, phase, op,
       round(req_per_s) AS req_per_s, round(lat_p99_us) AS p99_us,
       rss_kib / 1024 AS rss_mib, swap_kib / 1024 AS swap_mib,
       major_faults - LAG(major_faults) OVER w AS major_faults_per_s,
       pswpin - LAG(pswpin) OVER w AS pages_swapped_in,
       load1, round(store_used_memory / 1048576.0) AS used_memory_mib
FROM timeline
WHERE run_id = (SELECT max(run_id) FROM runs)
WINDOW w AS (PARTITION BY target_id, op ORDER BY ts_us)
ORDER BY ts_us, store, op DESC;
