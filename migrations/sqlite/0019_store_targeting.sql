-- 0019: campaigns for some stores (by code) or store groups (regions), and
-- the groups a store belongs to.
PRAGMA foreign_keys = off;
ALTER TABLE `campaigns` ADD COLUMN `store_codes` json NULL;
ALTER TABLE `campaigns` ADD COLUMN `store_groups` json NULL;
ALTER TABLE `stores` ADD COLUMN `groups` json NULL;
PRAGMA foreign_keys = on;
