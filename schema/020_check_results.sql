-- 020: kvdrive check: what it judged, one row per objective, target pair, phase and op, kept on
-- the run of the candidate's last round (so a merge carries them with it). The verdict is the
-- interval's: 'regression' when all of it is worse than the objective allows, 'pass' when none
-- of it is, 'indeterminate' otherwise (or with too few rounds for an interval).
CREATE TABLE check_results (
  run_id         INTEGER NOT NULL REFERENCES runs(run_id),  -- the candidate's last round
  ts_us          INTEGER NOT NULL,  -- when the check ran
  repeat_group   TEXT NOT NULL,     -- the candidate's rounds
  baseline       TEXT NOT NULL,     -- the baseline's file and repeat group: FILE#GROUP
  store          TEXT NOT NULL,     -- the candidate's target (URI)
  against        TEXT NOT NULL,     -- the baseline's target at its position
  phase          TEXT NOT NULL,     -- the phase's kind
  op             TEXT NOT NULL,     -- set, get
  figure         TEXT NOT NULL,     -- req/s, or a latency percentile: p50, p99 ...
  max_regression REAL NOT NULL,     -- the objective: 0.05 allows 5 % worse
  ratio          REAL NOT NULL,     -- candidate / baseline (Hodges-Lehmann)
  low            REAL,              -- its interval; NULL with too few rounds
  high           REAL,
  verdict        TEXT NOT NULL CHECK (verdict IN ('pass', 'regression', 'indeterminate'))
);
CREATE INDEX check_results_run ON check_results(run_id);
