-- kvbench schema, migration 001: the tables. Every time is ts_us-style: integer microseconds
-- since the Unix epoch (UTC). Every value that could not be read is NULL, never 0.
-- Column meanings and units: schema/README.md.

-- One kvdrive invocation ("run"): several targets, each with its phases.
CREATE TABLE runs (
  run_id          INTEGER PRIMARY KEY,
  name            TEXT,
  started_ts_us   INTEGER NOT NULL,
  ended_ts_us     INTEGER,
  status          TEXT NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'completed', 'interrupted', 'failed', 'incomplete')),
  command_line    TEXT NOT NULL,
  kvdrive_version TEXT NOT NULL,
  client_host     TEXT NOT NULL,
  client_pid      INTEGER NOT NULL,
  run_group       TEXT,            -- runs made by several kvdrive processes together (--processes)
  process_index   INTEGER,         -- this process's place in the group, 0-based; NULL alone
  process_count   INTEGER,         -- processes in the group; NULL alone
  parameters      TEXT,            -- JSON object of the workload parameters
  scenario        TEXT,            -- --scenario NAME, or NULL
  scale           REAL,            -- --scale factor applied to the scenario, or NULL
  error           TEXT             -- why the run failed or was interrupted
);

-- A store benchmarked in a run (runs compare stores by benchmarking them one after another).
CREATE TABLE targets (
  target_id       INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs(run_id),
  ordinal         INTEGER NOT NULL,  -- 0-based position in the run
  uri             TEXT NOT NULL,     -- as given, with any password removed
  protocol        TEXT NOT NULL CHECK (protocol IN ('redis', 'memcached')),
  server_version  TEXT,              -- as the store reports it
  UNIQUE (run_id, ordinal)
);

-- A phase of the workload against one target: load (sets), read (gets), mixed.
CREATE TABLE phases (
  phase_id        INTEGER PRIMARY KEY,
  run_id          INTEGER NOT NULL REFERENCES runs(run_id),
  target_id       INTEGER NOT NULL REFERENCES targets(target_id),
  ordinal         INTEGER NOT NULL,  -- 0-based position within the target
  step            TEXT,              -- the scenario step it belongs to (e.g. '10K'), or NULL
  name            TEXT NOT NULL,     -- 'STEP/KIND', or KIND outside scenarios
  kind            TEXT NOT NULL CHECK (kind IN ('load', 'read', 'mixed')),
  started_ts_us   INTEGER NOT NULL,
  ended_ts_us     INTEGER,
  threads         INTEGER NOT NULL,
  connections     INTEGER NOT NULL,  -- in all, over every thread
  requests        INTEGER,           -- planned request count, NULL when ended by duration
  duration_us     INTEGER,           -- planned duration, NULL when ended by request count
  warmup_us       INTEGER NOT NULL DEFAULT 0,  -- leading time excluded from summaries
  rate            REAL,              -- rate mode: target requests/s over all connections; else NULL
  parameters      TEXT,              -- JSON: the phase's workload (keys, pattern, ratio, rate ...)
  status          TEXT NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'completed', 'interrupted', 'failed', 'incomplete')),
  UNIQUE (target_id, ordinal)
);

-- One row per second of a phase and operation type, as the driver measured it.
CREATE TABLE driver_seconds (
  phase_id        INTEGER NOT NULL REFERENCES phases(phase_id),
  ts_us           INTEGER NOT NULL,  -- start of the interval
  interval_us     INTEGER NOT NULL,  -- its length (the last one of a phase may be short)
  op              TEXT NOT NULL,     -- 'set' or 'get'
  ops             INTEGER NOT NULL,  -- requests completed (any outcome)
  bytes_out       INTEGER NOT NULL,  -- key and value bytes sent
  bytes_in        INTEGER NOT NULL,  -- value bytes received
  hits            INTEGER NOT NULL,
  misses          INTEGER NOT NULL,
  errors          INTEGER NOT NULL,
  timeouts        INTEGER NOT NULL,
  wrong           INTEGER NOT NULL DEFAULT 0,  -- gets whose value differed from what was written
  late            INTEGER,           -- rate mode: sends more than 1 ms behind schedule; else NULL
  warmup          INTEGER NOT NULL DEFAULT 0,  -- 1: a warm-up second, left out of summaries
  lat_mean_us     REAL,              -- NULL when ops = 0; in rate mode from the intended send time
  lat_p50_us      REAL,
  lat_p90_us      REAL,
  lat_p99_us      REAL,
  lat_p999_us     REAL,
  lat_max_us      REAL,
  uncorrected_p50_us REAL,           -- rate mode: from the actual send time; else NULL
  uncorrected_p99_us REAL,
  uncorrected_max_us REAL,
  PRIMARY KEY (phase_id, ts_us, op)
);

-- kvdrive's own cost, once per second of a phase: is the client the bottleneck?
CREATE TABLE client_seconds (
  phase_id        INTEGER NOT NULL REFERENCES phases(phase_id),
  ts_us           INTEGER NOT NULL,
  interval_us     INTEGER NOT NULL,
  cpu_user_us     INTEGER,           -- kvdrive's CPU time in the interval (all threads)
  cpu_system_us   INTEGER,
  busiest_thread_cpu_pct REAL,       -- the busiest worker thread's CPU, % of one core
  PRIMARY KEY (phase_id, ts_us)
);

-- A phase's latency distribution (warm-up excluded): count of requests whose latency fell in
-- (previous bound, upper_us]. timing 'sent': measured from the actual send; 'intended': from the
-- intended send time (rate mode only: corrects coordinated omission).
CREATE TABLE latency_buckets (
  phase_id        INTEGER NOT NULL REFERENCES phases(phase_id),
  op              TEXT NOT NULL,
  timing          TEXT NOT NULL DEFAULT 'sent' CHECK (timing IN ('sent', 'intended')),
  upper_us        REAL NOT NULL,
  count           INTEGER NOT NULL,
  PRIMARY KEY (phase_id, op, timing, upper_us)
);

-- Counters the store reports about itself (Redis INFO, memcached stats), one row per value.
CREATE TABLE store_stats (
  target_id       INTEGER NOT NULL REFERENCES targets(target_id),
  ts_us           INTEGER NOT NULL,
  name            TEXT NOT NULL,     -- the store's own field name, e.g. used_memory, cmd_get
  value           REAL NOT NULL,
  PRIMARY KEY (target_id, ts_us, name)
);

-- One kvmon invocation.
CREATE TABLE monitor_sessions (
  session_id      INTEGER PRIMARY KEY,
  host            TEXT NOT NULL,
  started_ts_us   INTEGER NOT NULL,
  ended_ts_us     INTEGER,
  status          TEXT NOT NULL DEFAULT 'running'
                  CHECK (status IN ('running', 'completed', 'interrupted', 'failed', 'incomplete')),
  kvmon_version   TEXT NOT NULL,
  kvmon_pid       INTEGER NOT NULL,
  interval_us     INTEGER NOT NULL,
  command_line    TEXT NOT NULL,
  clock_offset_us INTEGER,           -- added to this host's times to get the reader's time base
  clock_uncertainty_us INTEGER
);

-- A monitored process: identity is (host, pid, start time), never the pid alone.
CREATE TABLE process_instances (
  instance_id     INTEGER PRIMARY KEY,
  session_id      INTEGER NOT NULL REFERENCES monitor_sessions(session_id),
  host            TEXT NOT NULL,
  pid             INTEGER NOT NULL,
  start_ticks     INTEGER NOT NULL,  -- /proc/PID/stat starttime (clock ticks since boot)
  started_ts_us   INTEGER,           -- the same, as wall-clock time
  name            TEXT,              -- /proc/PID/comm
  command_line    TEXT,
  selector        TEXT NOT NULL,     -- how it was found: pid:N, name:redis-server, ...
  parent_instance_id INTEGER REFERENCES process_instances(instance_id),  -- for fork children
  first_seen_ts_us INTEGER NOT NULL,
  last_seen_ts_us INTEGER,
  UNIQUE (session_id, host, pid, start_ticks)
);

-- One sample of one process instance.
CREATE TABLE process_samples (
  instance_id     INTEGER NOT NULL REFERENCES process_instances(instance_id),
  ts_us           INTEGER NOT NULL,  -- when it was read
  scheduled_ts_us INTEGER NOT NULL,  -- when it was due
  rss_kib         INTEGER,
  rss_anon_kib    INTEGER,
  rss_file_kib    INTEGER,
  rss_shmem_kib   INTEGER,
  swap_kib        INTEGER,
  vsize_kib       INTEGER,
  cpu_user_us     INTEGER,           -- cumulative, clock-tick resolution
  cpu_system_us   INTEGER,           -- cumulative, clock-tick resolution
  threads         INTEGER,
  fds             INTEGER,
  io_read_bytes   INTEGER,           -- cumulative bytes read from storage
  io_write_bytes  INTEGER,           -- cumulative bytes written to storage
  minor_faults    INTEGER,           -- cumulative
  major_faults    INTEGER,           -- cumulative
  ctx_voluntary   INTEGER,           -- cumulative
  ctx_involuntary INTEGER,           -- cumulative
  pss_kib         INTEGER,           -- opt-in (smaps_rollup is costly)
  PRIMARY KEY (instance_id, ts_us)
);

-- One sample of the monitored host.
CREATE TABLE host_samples (
  session_id      INTEGER NOT NULL REFERENCES monitor_sessions(session_id),
  ts_us           INTEGER NOT NULL,
  scheduled_ts_us INTEGER NOT NULL,
  load1           REAL,
  load5           REAL,
  load15          REAL,
  mem_total_kib   INTEGER,
  mem_available_kib INTEGER,
  swap_total_kib  INTEGER,
  swap_free_kib   INTEGER,
  pswpin          INTEGER,           -- cumulative pages swapped in
  pswpout         INTEGER,           -- cumulative pages swapped out
  pgmajfault      INTEGER,           -- cumulative major faults, all processes
  cpu_user_ticks  INTEGER,           -- cumulative, all CPUs (user + nice)
  cpu_system_ticks INTEGER,
  cpu_iowait_ticks INTEGER,
  cpu_steal_ticks INTEGER,
  cpu_idle_ticks  INTEGER,
  psi_memory_some_avg10 REAL,        -- percent; NULL where the kernel has no PSI
  psi_memory_full_avg10 REAL,
  psi_io_some_avg10 REAL,
  psi_io_full_avg10 REAL,
  psi_cpu_some_avg10 REAL,
  PRIMARY KEY (session_id, ts_us)
);

-- One sample of one whole disk.
CREATE TABLE disk_samples (
  session_id      INTEGER NOT NULL REFERENCES monitor_sessions(session_id),
  ts_us           INTEGER NOT NULL,
  device          TEXT NOT NULL,
  reads           INTEGER,           -- cumulative completed reads
  writes          INTEGER,           -- cumulative completed writes
  sectors_read    INTEGER,           -- cumulative, 512-byte sectors
  sectors_written INTEGER,
  io_ms           INTEGER,           -- cumulative time with I/O in flight
  PRIMARY KEY (session_id, ts_us, device)
);

-- Things that happened: a run started or ended, a store restarted, a sample was dropped ...
CREATE TABLE events (
  event_id        INTEGER PRIMARY KEY,
  ts_us           INTEGER NOT NULL,
  source          TEXT NOT NULL CHECK (source IN ('kvdrive', 'kvmon')),
  run_id          INTEGER REFERENCES runs(run_id),
  session_id      INTEGER REFERENCES monitor_sessions(session_id),
  instance_id     INTEGER REFERENCES process_instances(instance_id),
  kind            TEXT NOT NULL,
  message         TEXT NOT NULL
);

CREATE INDEX driver_seconds_ts ON driver_seconds(ts_us);
CREATE INDEX process_samples_ts ON process_samples(ts_us);
CREATE INDEX host_samples_ts ON host_samples(ts_us);
CREATE INDEX events_ts ON events(ts_us);
CREATE INDEX store_stats_name ON store_stats(name, target_id);
