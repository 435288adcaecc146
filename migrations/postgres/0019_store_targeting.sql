-- 0019: campaigns for some stores (by code) or store groups (regions), and
-- the groups a store belongs to.
ALTER TABLE "campaigns" ADD COLUMN "store_codes" jsonb NULL, ADD COLUMN "store_groups" jsonb NULL;
ALTER TABLE "stores" ADD COLUMN "groups" jsonb NULL;
