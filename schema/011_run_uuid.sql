-- 011: every run gets a UUID, unique across results files, so runs of several client hosts
-- (`kvdrive run --segment I/N --group LABEL`) keep their identity when files are merged and
-- their integer run_ids are renumbered. NULL in runs made before this migration.

ALTER TABLE runs ADD COLUMN run_uuid TEXT;
CREATE UNIQUE INDEX runs_uuid ON runs(run_uuid);
