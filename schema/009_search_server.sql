-- 009: the store's side of each search step. What its cgroup did (kvmon's cg_* columns of the
-- store's process_samples over the step's window; NULL where kvmon saw no such cgroup file),
-- and its own latency (Redis 7 LATENCY HISTOGRAM, polled with the store's counters; NULL for
-- memcached and Redis before 7, which have none).
ALTER TABLE search_steps ADD COLUMN cg_memory_high_events INTEGER;  -- memory.events high
ALTER TABLE search_steps ADD COLUMN cg_memory_max_events INTEGER;   -- memory.events max (v1 failcnt)
ALTER TABLE search_steps ADD COLUMN cg_oom_events INTEGER;          -- oom / oom_kill (v1 under_oom)
ALTER TABLE search_steps ADD COLUMN cg_cpu_throttled_pct REAL;      -- % of CPU quota periods throttled
ALTER TABLE search_steps ADD COLUMN cg_cpu_throttled_ms_per_s REAL; -- throttled time per second
ALTER TABLE search_steps ADD COLUMN server_calls INTEGER;           -- commands the store timed
ALTER TABLE search_steps ADD COLUMN server_p50_us REAL;             -- its execution time: bucket
ALTER TABLE search_steps ADD COLUMN server_p99_us REAL;             -- upper bounds (powers of two)
ALTER TABLE search_steps ADD COLUMN server_p999_us REAL;
