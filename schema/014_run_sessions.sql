-- kvbench schema, migration 014: which kvmon sessions belong to which run, so that in a file
-- merged from several client hosts (`kvdrive merge`) each run's timeline reads its own copy of a
-- kvmon session and the store's own host, never another host's process of the same pid or
-- another host's load. Column meanings: schema/README.md.

-- A run's kvmon sessions, written by `kvdrive merge` for the sessions an input's kvdrive pulled
-- over --monitor (link not NULL) while the run ran. A session tied to no run here (a kvmon's own
-- file, a file not merged) belongs to every run whose time it overlaps (run_sessions).
CREATE TABLE run_monitor_sessions (
  run_id          INTEGER NOT NULL REFERENCES runs(run_id),
  session_id      INTEGER NOT NULL REFERENCES monitor_sessions(session_id),
  PRIMARY KEY (run_id, session_id)
);

DROP VIEW phase_report;
DROP VIEW timeline;
DROP VIEW target_instances;

-- The kvmon sessions of each run: those tied to it, and those tied to no run that overlap it.
CREATE VIEW run_sessions AS
SELECT x.run_id, x.session_id FROM run_monitor_sessions x
UNION
SELECT r.run_id, m.session_id
FROM runs r
JOIN monitor_sessions m
  ON m.started_ts_us <= COALESCE(r.ended_ts_us, 9223372036854775807)
 AND COALESCE(m.ended_ts_us, 9223372036854775807) >= r.started_ts_us
WHERE NOT EXISTS (SELECT 1 FROM run_monitor_sessions x WHERE x.session_id = m.session_id);

-- Which monitored process is each target's store: the pid the store reports about itself (Redis
-- INFO process_id, memcached stats pid), looked for in the run's own kvmon sessions only.
CREATE VIEW target_instances AS
SELECT DISTINCT t.target_id, i.instance_id, i.pid, i.host
FROM targets t
JOIN store_stats ss ON ss.target_id = t.target_id AND ss.name IN ('process_id', 'pid')
JOIN run_sessions rs ON rs.run_id = t.run_id
JOIN process_instances i
  ON i.session_id = rs.session_id AND i.pid = CAST(ss.value AS INTEGER)
 AND i.parent_instance_id IS NULL;

-- Which monitored process is each node of a Redis Cluster target (and each server of a memcached
-- pool): store_stats holds each node's own pid as 'HOST:PORT/process_id' ('HOST:PORT/pid'), and
-- the node is the instance of that pid in the run's sessions. Where several hosts have a process
-- of that pid, the ones whose kvmon was reached at the node's own host (link HOST = node HOST)
-- are kept. node: HOST:PORT as the store_stats prefix; link: the instance's session's.
CREATE VIEW node_instances AS
WITH c AS (
  SELECT DISTINCT t.target_id, substr(ss.name, 1, instr(ss.name, '/') - 1) AS node,
         i.instance_id, i.pid, i.host, m.link
  FROM targets t
  JOIN store_stats ss
    ON ss.target_id = t.target_id AND (ss.name LIKE '%/process_id' OR ss.name LIKE '%/pid')
  JOIN run_sessions rs ON rs.run_id = t.run_id
  JOIN process_instances i
    ON i.session_id = rs.session_id AND i.pid = CAST(ss.value AS INTEGER)
   AND i.parent_instance_id IS NULL
  JOIN monitor_sessions m ON m.session_id = i.session_id),
r AS (
  SELECT c.*, COALESCE(rtrim(rtrim(c.link, '0123456789'), ':') =
                       rtrim(rtrim(c.node, '0123456789'), ':'), 0) AS same_host
  FROM c)
SELECT target_id, node, instance_id, pid, host, link FROM r
WHERE same_host = (SELECT MAX(r2.same_host) FROM r r2
                   WHERE r2.target_id = r.target_id AND r2.node = r.node);

-- The kvmon sessions whose host rows describe each target's host: those holding its store's
-- process; where kvmon found no store process, the run's sessions when they all watch one host
-- (else none: another host's load is not this store's).
CREATE VIEW target_sessions AS
SELECT DISTINCT ti.target_id, i.session_id
FROM target_instances ti JOIN process_instances i ON i.instance_id = ti.instance_id
UNION
SELECT t.target_id, rs.session_id
FROM targets t JOIN run_sessions rs ON rs.run_id = t.run_id
WHERE NOT EXISTS (SELECT 1 FROM target_instances ti WHERE ti.target_id = t.target_id)
  AND (SELECT COUNT(DISTINCT m.host) FROM run_sessions r2
       JOIN monitor_sessions m ON m.session_id = r2.session_id WHERE r2.run_id = t.run_id) = 1;

-- As in migration 004, with the store's process and the host's rows taken from the run's own
-- kvmon sessions on the store's host (target_instances, target_sessions).
CREATE VIEW timeline AS
WITH ti AS MATERIALIZED (SELECT target_id, instance_id FROM target_instances),
     ts AS MATERIALIZED (SELECT target_id, session_id FROM target_sessions)
SELECT d.ts_us, p.run_id, t.target_id, t.uri AS store, p.phase_id, p.name AS phase, d.op,
       COALESCE(d.ok, d.ops - d.errors - d.timeouts) * 1e6 / d.interval_us AS req_per_s,
       (d.errors + d.timeouts) * 1e6 / d.interval_us AS failed_per_s,
       d.lat_p99_us, d.errors + d.timeouts AS failed,
       ps.rss_kib, ps.swap_kib, ps.major_faults,
       ps.cpu_user_us + ps.cpu_system_us AS cpu_us, ps.io_write_bytes,
       hs.load1, hs.swap_total_kib - hs.swap_free_kib AS host_swap_used_kib, hs.pswpin, hs.pswpout,
       (SELECT ss.value FROM store_stats ss
         WHERE ss.target_id = t.target_id AND ss.name = 'used_memory'
           AND ss.ts_us < d.ts_us + d.interval_us
         ORDER BY ss.ts_us DESC LIMIT 1) AS store_used_memory
FROM driver_seconds d
JOIN phases p ON p.phase_id = d.phase_id
JOIN targets t ON t.target_id = p.target_id
LEFT JOIN process_samples ps ON ps.rowid = (
  SELECT s.rowid FROM process_samples s
  WHERE s.instance_id IN (SELECT ti.instance_id FROM ti WHERE ti.target_id = t.target_id)
    AND s.scheduled_ts_us >= d.ts_us AND s.scheduled_ts_us < d.ts_us + d.interval_us
  ORDER BY s.scheduled_ts_us DESC LIMIT 1)
LEFT JOIN host_samples hs ON hs.rowid = (
  SELECT h.rowid FROM host_samples h
  WHERE h.session_id IN (SELECT ts.session_id FROM ts WHERE ts.target_id = t.target_id)
    AND h.scheduled_ts_us >= d.ts_us AND h.scheduled_ts_us < d.ts_us + d.interval_us
  ORDER BY h.scheduled_ts_us DESC LIMIT 1);

-- As in migration 004, with the load average from the store's host (target_sessions).
CREATE VIEW phase_report AS
WITH ti AS MATERIALIZED (SELECT target_id, instance_id FROM target_instances),
     ts AS MATERIALIZED (SELECT target_id, session_id FROM target_sessions)
SELECT ps.*,
       h.load1, h.load5, h.load15,
       (SELECT MAX(s.rss_kib) FROM process_samples s
         JOIN ti ON ti.instance_id = s.instance_id AND ti.target_id = ps.target_id
         WHERE s.ts_us BETWEEN p.started_ts_us AND COALESCE(p.ended_ts_us, s.ts_us)) AS peak_rss_kib,
       (SELECT MAX(s.swap_kib) FROM process_samples s
         JOIN ti ON ti.instance_id = s.instance_id AND ti.target_id = ps.target_id
         WHERE s.ts_us BETWEEN p.started_ts_us AND COALESCE(p.ended_ts_us, s.ts_us)) AS peak_swap_kib,
       (SELECT CASE WHEN COUNT(*) >= 2 THEN
                 (MAX(s.cpu_user_us + s.cpu_system_us) - MIN(s.cpu_user_us + s.cpu_system_us)) / 1e6
               END
          FROM process_samples s
          JOIN ti ON ti.instance_id = s.instance_id AND ti.target_id = ps.target_id
         WHERE s.ts_us BETWEEN p.started_ts_us AND COALESCE(p.ended_ts_us, s.ts_us)) AS store_cpu_s,
       (SELECT SUM(c.cpu_user_us) / 1e6 FROM client_seconds c WHERE c.phase_id = p.phase_id)
         AS client_cpu_user_s,
       (SELECT SUM(c.cpu_system_us) / 1e6 FROM client_seconds c WHERE c.phase_id = p.phase_id)
         AS client_cpu_system_s
FROM phase_summary ps
JOIN phases p ON p.phase_id = ps.phase_id
LEFT JOIN host_samples h ON h.rowid = (
  SELECT hh.rowid FROM host_samples hh
  WHERE hh.session_id IN (SELECT ts.session_id FROM ts WHERE ts.target_id = ps.target_id)
    AND hh.ts_us <= COALESCE(p.ended_ts_us, p.started_ts_us)
  ORDER BY hh.ts_us DESC LIMIT 1);
