-- 0040 (issue 36): the largest share of a sale payable with points may be
-- set per level (silver, gold, diamond); none is the programme's share.
ALTER TABLE "tenants" ADD COLUMN IF NOT EXISTS "points_spend_max_share_silver" numeric(20,8) NULL, ADD COLUMN IF NOT EXISTS "points_spend_max_share_gold" numeric(20,8) NULL, ADD COLUMN IF NOT EXISTS "points_spend_max_share_diamond" numeric(20,8) NULL;
