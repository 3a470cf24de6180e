-- 013: the CPU quota of a process's cgroup, as kvmon reads it each sample: the quota and its
-- period in µs (v2 cpu.max; v1 cpu.cfs_quota_us and cpu.cfs_period_us). No quota (v2 "max",
-- v1 -1) is 9223372036854775807 as for the memory limits; NULL where the file is absent. The
-- capacity search takes quota / period as the cores the store can use.
ALTER TABLE process_samples ADD COLUMN cg_cpu_quota_us INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_cpu_period_us INTEGER;
