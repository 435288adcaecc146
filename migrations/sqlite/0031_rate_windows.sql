-- 0030 (issue 35): request quotas shared by the processes of a PostgreSQL
-- database (ratelimit.Shared). SQLite has one process, whose quotas are
-- counted in its memory: the table is here only to keep both dialects'
-- migrations in step, and stays empty.
CREATE TABLE IF NOT EXISTS `rate_windows` (
  `key` blob NOT NULL PRIMARY KEY,
  `window_end` datetime NOT NULL,
  `count` integer NOT NULL
);
