-- Latency of each run group (`kvdrive run --group LABEL --segment I/N` on several hosts, or
-- `--processes N`) as ONE distribution: every run's measured seconds' histograms
-- (second_latency_buckets) added bucket by bucket per store (target ordinal), phase kind and
-- op, then the percentiles of the sum -- beside the mean of the runs' own p99s, which is not the
-- p99 of the group and can be far from it. A run outside any group is its own group. As in
-- phase_percentiles, each percentile is clamped to the group's [min, max] (latency_range), so
-- none exceeds the slowest request (a bucket's upper bound can).
-- Usage: sqlite3 -header -column results.db < schema/queries/group_percentiles.sql
WITH g AS (SELECT run_id, COALESCE(run_group, 'run ' || run_id) AS grp FROM runs),
ph AS (SELECT p.phase_id, g.grp, t.ordinal AS target, p.kind,
              CASE WHEN p.rate IS NULL THEN 'sent' ELSE 'intended' END AS timing
       FROM phases p JOIN g USING (run_id) JOIN targets t USING (target_id)),
b AS (SELECT ph.grp, ph.target, ph.kind, s.op, s.upper_us, SUM(s.count) AS n
      FROM second_latency_buckets s
      JOIN ph ON ph.phase_id = s.phase_id AND s.timing = ph.timing
      JOIN driver_seconds d ON d.phase_id = s.phase_id AND d.ts_us = s.ts_us AND d.op = s.op
      WHERE d.warmup = 0
      GROUP BY ph.grp, ph.target, ph.kind, s.op, s.upper_us),
c AS (SELECT b.*, SUM(n) OVER (PARTITION BY grp, target, kind, op ORDER BY upper_us) AS cum,
             SUM(n) OVER (PARTITION BY grp, target, kind, op) AS total
      FROM b),
u AS (SELECT grp, target, kind, op, MAX(total) AS requests,
             MIN(CASE WHEN cum >= 0.50 * total THEN upper_us END) AS p50_us,
             MIN(CASE WHEN cum >= 0.99 * total THEN upper_us END) AS p99_us,
             MIN(CASE WHEN cum >= 0.999 * total THEN upper_us END) AS p999_us
      FROM c GROUP BY grp, target, kind, op),
r AS (SELECT ph.grp, ph.target, ph.kind, lr.op, MIN(lr.min_us) AS min_us, MAX(lr.max_us) AS max_us
      FROM latency_range lr JOIN ph ON ph.phase_id = lr.phase_id AND lr.timing = ph.timing
      GROUP BY ph.grp, ph.target, ph.kind, lr.op),
m AS (SELECT ph.grp, ph.target, ph.kind, pp.op, COUNT(DISTINCT ph.phase_id) AS phases,
             AVG(pp.p99_us) AS mean_of_runs_p99_us
      FROM phase_percentiles pp JOIN ph ON ph.phase_id = pp.phase_id AND pp.timing = ph.timing
      GROUP BY ph.grp, ph.target, ph.kind, pp.op)
SELECT u.grp AS run_group, u.target, u.kind, u.op, m.phases, u.requests,
       MAX(MIN(u.p50_us, COALESCE(r.max_us, u.p50_us)), COALESCE(r.min_us, 0)) AS p50_us,
       MAX(MIN(u.p99_us, COALESCE(r.max_us, u.p99_us)), COALESCE(r.min_us, 0)) AS p99_us,
       MAX(MIN(u.p999_us, COALESCE(r.max_us, u.p999_us)), COALESCE(r.min_us, 0)) AS p999_us,
       round(m.mean_of_runs_p99_us, 3) AS mean_of_runs_p99_us
FROM u LEFT JOIN r USING (grp, target, kind, op) LEFT JOIN m USING (grp, target, kind, op)
ORDER BY u.grp, u.target, u.kind, u.op;
