-- 010: the store's cgroup memory pressure in each search step: the highest `full` avg10 of its
-- v2 memory.pressure in kvmon's samples of the step (cg_psi_memory_full_avg10), a percentage;
-- NULL where kvmon read no v2 pressure file for the store.
ALTER TABLE search_steps ADD COLUMN cg_psi_memory_full_pct REAL;
