-- kvbench schema, migration 005: the store's cgroup. Column meanings: schema/README.md.
-- kvmon: the target's cgroup, sampled per tick (monitor/README.md "Cgroups"). All NULL where
-- absent: a process in no memory/cpu hierarchy, a file the kernel does not have, a fork child.
-- Limits not set are 9223372036854775807. Counters are cumulative; *_avg10 are PSI percentages.
ALTER TABLE process_samples ADD COLUMN cg_memory_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_memory_max_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_memory_high_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_swap_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_swap_max_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_memsw_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_memsw_max_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_anon_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_file_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_kernel_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_shmem_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_pgmajfault INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_workingset_refault_anon INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_workingset_refault_file INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_pgscan INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_pgsteal INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_events_high INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_events_max INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_events_oom INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_events_oom_kill INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_swap_events_max INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_swap_events_fail INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_under_oom INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_failcnt INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_cpu_usage_us INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_cpu_nr_periods INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_cpu_nr_throttled INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_cpu_throttled_us INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_io_read_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_io_write_bytes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_io_reads INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_io_writes INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_psi_memory_some_avg10 REAL;
ALTER TABLE process_samples ADD COLUMN cg_psi_memory_full_avg10 REAL;
ALTER TABLE process_samples ADD COLUMN cg_psi_io_some_avg10 REAL;
ALTER TABLE process_samples ADD COLUMN cg_psi_io_full_avg10 REAL;
ALTER TABLE process_samples ADD COLUMN cg_psi_cpu_some_avg10 REAL;
