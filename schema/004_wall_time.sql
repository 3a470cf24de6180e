-- kvbench schema, migration 004: time as true as counts. Every second of a phase has a row per
-- op the phase sends (ops 0 when nothing completed), rows sit on whole seconds of the common
-- time base, and req/s counts answered requests per wall second. Column meanings: schema/README.md.

-- Requests that got an answer (ok, hit or miss) = ops - errors - timeouts.
ALTER TABLE driver_seconds ADD COLUMN ok INTEGER;
-- Rate mode: how late requests were sent against their schedule (actual - intended send); else NULL.
ALTER TABLE driver_seconds ADD COLUMN slip_p50_us REAL;
ALTER TABLE driver_seconds ADD COLUMN slip_p99_us REAL;
ALTER TABLE driver_seconds ADD COLUMN slip_max_us REAL;
-- Rate mode: CPU time the worker threads spent spinning for a send time (left out of
-- busiest_thread_cpu_pct, since the thread had nothing else to do).
ALTER TABLE client_seconds ADD COLUMN spin_us INTEGER;
