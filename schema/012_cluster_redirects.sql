-- Redis Cluster redirects kvdrive followed, per second of a phase (all its worker threads):
-- MOVED (the slot has a new owner: kvdrive updates its slot map, re-reads CLUSTER SLOTS at most
-- every 100 ms, and sends the request again) and ASK (the slot is being migrated: the request
-- goes once to the importing node, after ASKING). NULL for a target that is not a cluster.
-- A redirected request is one request in driver_seconds, timed from its first queueing.
ALTER TABLE client_seconds ADD COLUMN cluster_moved INTEGER;
ALTER TABLE client_seconds ADD COLUMN cluster_ask INTEGER;
