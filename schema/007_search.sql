-- 007: the capacity search (`kvdrive run --search`): one row per step (a rate-mode phase) with
-- its verdict against the objective, and one row per searched target with the result.

CREATE TABLE search_steps (
  phase_id        INTEGER PRIMARY KEY REFERENCES phases(phase_id),
  run_id          INTEGER NOT NULL REFERENCES runs(run_id),
  target_id       INTEGER NOT NULL REFERENCES targets(target_id),
  ordinal         INTEGER NOT NULL,  -- 0-based order of the step in the search
  offered_rate    REAL NOT NULL,     -- requests/s on the schedule
  achieved_rate   REAL,              -- answered requests per second of the measured window
  measured_us     INTEGER,           -- the window judged: the step after its warm-up
  requests        INTEGER,           -- completed in the window, any outcome
  failed          INTEGER,           -- errors + timeouts in the window
  lat_p50_us      REAL,              -- intended-time latency (CO-corrected), set and get together
  lat_p90_us      REAL,
  lat_p99_us      REAL,
  lat_p999_us     REAL,
  lat_p9999_us    REAL,
  lat_max_us      REAL,
  slip_p50_us     REAL,
  slip_p99_us     REAL,
  busiest_thread_cpu_pct REAL,       -- the busiest kvdrive thread's highest second (spin left out)
  busiest_thread_wanted_pct REAL,    -- the same, on a CPU or runnable waiting for one; NULL unknown
  store_cpu_pct   REAL,              -- kvmon: the store process's CPU, % of one core; NULL unknown
  swap_in_pages_per_s REAL,          -- kvmon: host pswpin per second
  major_faults_per_s REAL,           -- kvmon: the store process's major faults per second
  psi_memory_full_pct REAL,          -- kvmon: highest host memory PSI full avg10
  verdict         TEXT NOT NULL CHECK (verdict IN ('pass', 'fail', 'invalid')),
  limit_reason    TEXT,              -- what decided it: p99, achieved, errors, client-cpu, slip,
                                     -- samples, server: swap-in ...; NULL for a pass
  detail          TEXT               -- every limit passed, as printed
);

CREATE TABLE search_results (
  run_id          INTEGER NOT NULL REFERENCES runs(run_id),
  target_id       INTEGER NOT NULL REFERENCES targets(target_id),
  max_compliant_rate REAL,           -- highest passing step; NULL when none passed
  limiting_phase_id INTEGER REFERENCES phases(phase_id),  -- the lowest failing step above it
  client_bound_rate REAL,            -- the first step the client could not send; NULL if none
  stopped         TEXT NOT NULL,     -- why the search ended
  summary         TEXT NOT NULL,     -- the printed result
  PRIMARY KEY (run_id, target_id)
);

-- The latency-throughput curve: every step in order of offered rate.
CREATE VIEW search_curve AS
SELECT s.run_id, s.target_id, t.uri AS store, s.ordinal, s.offered_rate, s.achieved_rate,
       s.achieved_rate / s.offered_rate AS achieved_fraction,
       s.lat_p50_us, s.lat_p99_us, s.lat_p999_us, s.lat_max_us, s.slip_p99_us,
       s.busiest_thread_cpu_pct, s.busiest_thread_wanted_pct, s.store_cpu_pct, s.verdict, s.limit_reason,
       s.offered_rate = r.max_compliant_rate AND s.verdict = 'pass' AS is_max_compliant
FROM search_steps s
JOIN targets t ON t.target_id = s.target_id
LEFT JOIN search_results r ON r.run_id = s.run_id AND r.target_id = s.target_id
ORDER BY s.run_id, s.target_id, s.offered_rate, s.ordinal;
