-- Each second of the latest run: the driver's throughput and p99 per store and op, beside the
-- store process's RSS and swap as kvmon sampled them in that second (the store is matched to
-- the monitored process by name: redis-server for redis targets, memcached for memcached).
-- Usage: sqlite3 -header -column results.db < schema/queries/throughput_vs_memory.sql
WITH sec AS (
  SELECT t.uri AS store, t.protocol, d.ts_us, d.interval_us, d.op,
         d.ops * 1e6 / d.interval_us AS req_per_s, d.lat_p99_us
  FROM driver_seconds d
  JOIN phases p USING (phase_id)
  JOIN targets t USING (target_id)
  WHERE p.run_id = (SELECT max(run_id) FROM runs)
),
sample AS (
  SELECT sec.*,
         (SELECT s.rowid FROM process_samples s
          JOIN process_instances i USING (instance_id)
          WHERE i.name = CASE sec.protocol WHEN 'redis' THEN 'redis-server' ELSE 'memcached' END
            AND s.ts_us <= sec.ts_us + sec.interval_us
          ORDER BY s.ts_us DESC LIMIT 1) AS sample_rowid
  FROM sec
)
SELECT strftime('%H:%M:%S', sample.ts_us / 1e6, 'unixepoch') AS time_utc,
       sample.store, sample.op,
       round(sample.req_per_s) AS req_per_s,
       round(sample.lat_p99_us) AS p99_us,
       s.rss_kib, s.swap_kib, s.major_faults
FROM sample
LEFT JOIN process_samples s ON s.rowid = sample.sample_rowid
ORDER BY sample.ts_us, sample.store, sample.op;
