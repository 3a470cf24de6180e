-- kvbench schema, migration 003: samples that kvdrive pulls from a kvmon over TCP
-- (docs/protocol.md). Their ts_us are in kvdrive's time base (remote time + clock_offset_us);
-- the raw time on kvmon's host is kept beside them. Column meanings: schema/README.md.

-- HOST:PORT kvdrive pulled this session from; NULL when kvmon wrote the rows itself.
ALTER TABLE monitor_sessions ADD COLUMN link TEXT;
-- The row's ts_us on kvmon's own clock; NULL when kvmon wrote the row itself.
ALTER TABLE process_samples ADD COLUMN remote_ts_us INTEGER;
ALTER TABLE host_samples ADD COLUMN remote_ts_us INTEGER;
ALTER TABLE disk_samples ADD COLUMN remote_ts_us INTEGER;
ALTER TABLE events ADD COLUMN remote_ts_us INTEGER;
