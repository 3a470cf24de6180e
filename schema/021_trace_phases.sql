-- 021: a phase may be a trace replay (kvdrive run --trace): phases.kind 'trace'. SQLite cannot
-- alter a CHECK constraint, and rebuilding phases would mean rebuilding every view over it; the
-- constraint's text is widened in place (SQLite's documented procedure for schema changes that
-- leave the stored rows valid: "Making Other Kinds Of Table Schema Changes"). RESET reloads this
-- connection's schema; the table made and dropped after it bumps the schema cookie, so other
-- connections reload theirs.
PRAGMA writable_schema = ON;
UPDATE sqlite_schema
   SET sql = replace(sql, 'CHECK (kind IN (''load'', ''read'', ''mixed''))',
                     'CHECK (kind IN (''load'', ''read'', ''mixed'', ''trace''))')
 WHERE type = 'table' AND name = 'phases';
PRAGMA writable_schema = RESET;
CREATE TABLE schema_cookie_bump (x);
DROP TABLE schema_cookie_bump;

-- store_summary's mixed columns count a replay's phases as mixed ones: every answered request
-- per wall second, and the highest p99 of its ops. A replay at recorded timing has its trace's
-- mean rate in phases.rate, so its percentiles are from the intended times as rate mode's.
DROP VIEW store_summary;
CREATE VIEW store_summary AS
WITH ps AS MATERIALIZED (SELECT * FROM phase_summary),
ph AS (SELECT target_id, kind, MAX(seconds) AS seconds, SUM(ok) AS ok FROM ps GROUP BY phase_id)
SELECT run_id, target_id, store, protocol,
       SUM(CASE WHEN kind = 'load' AND op = 'set' THEN ok END) * 1e6 /
         NULLIF(SUM(CASE WHEN kind = 'load' AND op = 'set' THEN seconds * 1e6 END), 0) AS write_req_per_s,
       SUM(CASE WHEN kind = 'read' AND op = 'get' THEN ok END) * 1e6 /
         NULLIF(SUM(CASE WHEN kind = 'read' AND op = 'get' THEN seconds * 1e6 END), 0) AS read_req_per_s,
       (SELECT SUM(ph.ok) * 1e6 / NULLIF(SUM(ph.seconds * 1e6), 0) FROM ph
         WHERE ph.target_id = ps.target_id AND ph.kind IN ('mixed', 'trace')) AS mixed_req_per_s,
       MAX(CASE WHEN kind = 'load' AND op = 'set' THEN lat_p99_us END) AS write_p99_us,
       MAX(CASE WHEN kind = 'read' AND op = 'get' THEN lat_p99_us END) AS read_p99_us,
       MAX(CASE WHEN kind IN ('mixed', 'trace') THEN lat_p99_us END) AS mixed_p99_us,
       SUM(errors) + SUM(timeouts) AS errors
FROM ps
GROUP BY run_id, target_id;

-- A replay's trace, sized: its LRU miss-ratio curve (kvdrive mrc's, SHARDS with 8,192 keys
-- followed) at 1 % to 100 % of its working set, kept with the run that replayed it, so the
-- miss ratio the stores showed reads against the sizes of cache the trace needs.
CREATE TABLE trace_curves (
  run_id              INTEGER NOT NULL REFERENCES runs(run_id),
  trace               TEXT NOT NULL,     -- the --trace file, as given
  fraction            REAL NOT NULL,     -- of the trace's working set
  objects             INTEGER NOT NULL,  -- an LRU cache of this many objects ...
  objects_miss_ratio  REAL NOT NULL,     -- ... misses this share of the trace's reads
  bytes               INTEGER NOT NULL,  -- one of this many bytes (key + value sizes) ...
  bytes_miss_ratio    REAL NOT NULL,     -- ... this share
  UNIQUE (run_id, trace, fraction)
);
