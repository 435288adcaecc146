-- Campaign dates outside the years 0001 to 9999 in UTC, accepted before
-- issue 32, cannot be rendered (nor read back by SQLite): they become the
-- nearest instant that can.
UPDATE "campaigns" SET "starts_at" = '9999-12-31 23:59:59.999999+00' WHERE "starts_at" > '9999-12-31 23:59:59.999999+00';
UPDATE "campaigns" SET "ends_at" = '9999-12-31 23:59:59.999999+00' WHERE "ends_at" > '9999-12-31 23:59:59.999999+00';
UPDATE "campaigns" SET "starts_at" = '0001-01-01 00:00:00+00' WHERE "starts_at" < '0001-01-01 00:00:00+00';
UPDATE "campaigns" SET "ends_at" = '0001-01-01 00:00:00+00' WHERE "ends_at" < '0001-01-01 00:00:00+00';
