-- When each phase of a --processes group started in its processes. kvdrive run --processes N
-- starts every phase in all of them at one instant (run/phase_barrier.hpp: each process says it
-- is ready, the parent answers "go" with a wall time 20 ms ahead); this is how close they came.
-- One row per group, target and phase ordinal (the same phase in every process).
CREATE VIEW group_phase_starts AS
SELECT r.run_group, t.ordinal AS target_ordinal, p.ordinal AS phase_ordinal, p.kind,
       COUNT(*) AS processes,
       MIN(p.started_ts_us) AS first_started_ts_us,
       MAX(p.started_ts_us) - MIN(p.started_ts_us) AS start_spread_us
FROM runs r
JOIN phases p ON p.run_id = r.run_id
JOIN targets t ON t.target_id = p.target_id
WHERE r.run_group IS NOT NULL
GROUP BY r.run_group, t.ordinal, p.ordinal;

-- The longest any of kvdrive's workers waited for a CPU in the second: runnable, not running
-- (the kernel's run delay, /proc/self/task/TID/schedstat), µs. A client stall shows here even
-- when the client used no CPU (descheduled, or the machine busy with others). NULL when the
-- kernel did not say.
ALTER TABLE client_seconds ADD COLUMN run_delay_us INTEGER;

-- A capacity search step's longest such wait in one of its measured seconds (the worst process
-- of a --processes group), µs: the validity table's "cpu wait". NULL when unknown.
ALTER TABLE search_steps ADD COLUMN run_delay_max_us INTEGER;
