-- 0030 (issue 35): request quotas shared by every process of the database
-- (ratelimit.Shared): one row per key and its current window. UNLOGGED: a
-- crash empties it, which only gives every key a fresh window, and no
-- write-ahead log is written per request.
CREATE UNLOGGED TABLE IF NOT EXISTS "rate_windows" (
  "key" bytea NOT NULL PRIMARY KEY,
  "window_end" timestamptz NOT NULL,
  "count" bigint NOT NULL
);
