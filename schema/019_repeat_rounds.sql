-- 019: kvdrive run --repeat N: the whole workload run N times, each round recorded as its own
-- run, the targets' order rotated round by round (A B, B A, ...) so that a drift of the machine
-- hits every target alike. The rounds of one --repeat share repeat_group (not run_group, which
-- means processes that ran together and whose counts add up); round is 1..rounds. NULL for a
-- run made once.
ALTER TABLE runs ADD COLUMN repeat_group TEXT;
ALTER TABLE runs ADD COLUMN round INTEGER;
ALTER TABLE runs ADD COLUMN rounds INTEGER;
CREATE INDEX runs_by_repeat_group ON runs(repeat_group, round) WHERE repeat_group IS NOT NULL;
