-- Campaign dates outside the years 0001 to 9999 in UTC, accepted before
-- issue 32, are stored but cannot be read back (every list holding one
-- failed): they become the nearest instant that can. A year of five digits
-- or more is after 9999; a sign or the year 0000, before 0001.
UPDATE `campaigns` SET `starts_at` = '9999-12-31 23:59:59.999999999+00:00' WHERE `starts_at` GLOB '[0-9][0-9][0-9][0-9][0-9]*';
UPDATE `campaigns` SET `ends_at` = '9999-12-31 23:59:59.999999999+00:00' WHERE `ends_at` GLOB '[0-9][0-9][0-9][0-9][0-9]*';
UPDATE `campaigns` SET `starts_at` = '0001-01-01 00:00:00+00:00' WHERE `starts_at` GLOB '-*' OR `starts_at` GLOB '0000-*';
UPDATE `campaigns` SET `ends_at` = '0001-01-01 00:00:00+00:00' WHERE `ends_at` GLOB '-*' OR `ends_at` GLOB '0000-*';
