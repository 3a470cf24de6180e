-- Each second of the latest run: the driver's throughput (answered requests per wall second)
-- and p99 per store and op, beside the store process's RSS and swap as kvmon sampled them in
-- that second. The store is matched to its process by the pid it reports about itself
-- (target_instances), never by name, so another redis-server on the host is not shown; the
-- sample is the one whose tick fell in the row's second (as in the timeline view).
-- Usage: sqlite3 -header -column results.db < schema/queries/throughput_vs_memory.sql
SELECT strftime('%H:%M:%S', ts_us / 1e6, 'unixepoch') AS time_utc,
       store, op,
       round(req_per_s) AS req_per_s,
       round(lat_p99_us) AS p99_us,
       rss_kib, swap_kib, major_faults
FROM timeline
WHERE run_id = (SELECT max(run_id) FROM runs)
ORDER BY ts_us, store, op;
