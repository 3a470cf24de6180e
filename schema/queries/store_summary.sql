-- The published-table shape: per store in each run, answered requests per wall second of its
-- load phases (write), read phases (read) and mixed phases (sets and gets together).
-- Usage: sqlite3 -header -column results.db < schema/queries/store_summary.sql
SELECT run_id, store,
       round(write_req_per_s) AS write_req_per_s,
       round(read_req_per_s) AS read_req_per_s,
       round(mixed_req_per_s) AS mixed_req_per_s,
       round(write_p99_us) AS write_p99_us,
       round(read_p99_us) AS read_p99_us,
       round(mixed_p99_us) AS mixed_p99_us,
       errors
FROM store_summary
ORDER BY run_id, target_id;
