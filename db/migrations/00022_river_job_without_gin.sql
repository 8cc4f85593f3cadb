-- +goose Up
-- River's job table comes with GIN indexes on args and metadata, for its
-- optional UI's job search; neither River's own queries (riverpgxv5 0.51)
-- nor linkqr's ever use them. Every webhook delivery writes its job row
-- three times (enqueued, fetched, completed), each time with a GIN entry
-- per key and value of args and metadata: BenchmarkDelivery measured
-- PostgreSQL's CPU per delivery at 226-234 µs with them and 172-176 µs
-- without (docs/scan-pipeline.md). River's migrations run before these, so
-- the table exists; should a later River migration need the indexes, this
-- migration's Down puts them back.
DROP INDEX IF EXISTS river_job_args_index;
DROP INDEX IF EXISTS river_job_metadata_index;

-- +goose Down
CREATE INDEX IF NOT EXISTS river_job_args_index ON river_job USING GIN (args);
CREATE INDEX IF NOT EXISTS river_job_metadata_index ON river_job USING GIN (metadata);
