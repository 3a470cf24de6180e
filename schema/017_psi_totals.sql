-- 017: pressure stall time as counters beside the 10-second averages: the total= of each
-- /proc/pressure (host_samples) and cgroup v2 *.pressure (process_samples) line, in µs since
-- boot or since the cgroup was made. The stall time between two samples is their difference
-- (what node_exporter exports as node_pressure_*_seconds_total); NULL where the kernel has no
-- PSI or the file is absent.
ALTER TABLE host_samples ADD COLUMN psi_memory_some_us INTEGER;
ALTER TABLE host_samples ADD COLUMN psi_memory_full_us INTEGER;
ALTER TABLE host_samples ADD COLUMN psi_io_some_us INTEGER;
ALTER TABLE host_samples ADD COLUMN psi_io_full_us INTEGER;
ALTER TABLE host_samples ADD COLUMN psi_cpu_some_us INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_psi_memory_some_us INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_psi_memory_full_us INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_psi_io_some_us INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_psi_io_full_us INTEGER;
ALTER TABLE process_samples ADD COLUMN cg_psi_cpu_some_us INTEGER;
