-- 018: a memcached pool's servers, each second of a phase (all its worker threads): what
-- became of the requests each server got, so that a dead member is its own rows and the live
-- ones can be checked against their own counters. Every request of the phase counts once, on
-- the server it was sent to (or failed on), in exactly one of answered, failed and failed_fast:
-- summed over the servers they are driver_seconds' ops. NULL-free: a pool target writes a row
-- per server and second; other targets write none.
CREATE TABLE pool_server_seconds (
  phase_id     INTEGER NOT NULL REFERENCES phases(phase_id),
  ts_us        INTEGER NOT NULL,  -- the row's second, as driver_seconds.ts_us
  server       TEXT NOT NULL,     -- HOST:PORT as in the target's URI (store_stats' prefix)
  answered     INTEGER NOT NULL,  -- a reply came: a hit, a miss, stored, or the server's refusal
  failed       INTEGER NOT NULL,  -- it left (or waited for a connect) and failed: a timeout, a lost connection
  failed_fast  INTEGER NOT NULL,  -- failed at once without I/O: the server was backing off after a failed connect
  probes       INTEGER NOT NULL,  -- connects tried to find the server again while it was backing off
  rehashed     INTEGER NOT NULL,  -- ?on-failure=eject: of those it got, requests whose key's own server was ejected
  PRIMARY KEY (phase_id, ts_us, server)
);
