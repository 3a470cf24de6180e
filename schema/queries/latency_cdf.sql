-- The latency distribution (CDF) of each phase and op of the latest run, from the histogram
-- rows: for each bucket, the fraction of requests at or below its upper bound. Rate-mode phases
-- are shown from the intended send time (coordinated omission corrected), others from the
-- moment each request was queued.
-- Usage: sqlite3 -header -column results.db < schema/queries/latency_cdf.sql
SELECT t.uri AS store, p.name AS phase, b.op, b.timing, b.upper_us,
       round(1.0 * SUM(b.count) OVER w / SUM(b.count) OVER (PARTITION BY b.phase_id, b.op, b.timing), 5)
         AS fraction_at_or_below
FROM latency_buckets b
JOIN phases p USING (phase_id)
JOIN targets t USING (target_id)
WHERE p.run_id = (SELECT max(run_id) FROM runs)
  AND b.timing = CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END
WINDOW w AS (PARTITION BY b.phase_id, b.op, b.timing ORDER BY b.upper_us)
ORDER BY b.phase_id, b.op, b.upper_us;
