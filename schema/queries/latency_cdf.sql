-- The latency distribution (CDF) of each phase and op of the latest run, from the histogram
-- rows: for each bucket, the fraction of requests at or below its upper bound.
-- Usage: sqlite3 -header -column results.db < schema/queries/latency_cdf.sql
SELECT t.uri AS store, p.name AS phase, b.op, b.upper_us,
       round(1.0 * SUM(b.count) OVER w / SUM(b.count) OVER (PARTITION BY b.phase_id, b.op), 5)
         AS fraction_at_or_below
FROM latency_buckets b
JOIN phases p USING (phase_id)
JOIN targets t USING (target_id)
WHERE p.run_id = (SELECT max(run_id) FROM runs)
WINDOW w AS (PARTITION BY b.phase_id, b.op ORDER BY b.upper_us)
ORDER BY b.phase_id, b.op, b.upper_us;
