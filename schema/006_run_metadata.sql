-- kvbench schema, migration 006: what a run ran on, one row per fact, so two runs can be
-- compared parameter by parameter. Column meanings: schema/README.md.
CREATE TABLE run_metadata (
  run_id          INTEGER NOT NULL REFERENCES runs(run_id),
  target_id       INTEGER REFERENCES targets(target_id),  -- NULL: kvdrive and its host
  name            TEXT NOT NULL,     -- kernel, cpu_model, ... or the store's own setting name
  value           TEXT,              -- as read; NULL when it could not be read
  UNIQUE (run_id, target_id, name)
);
