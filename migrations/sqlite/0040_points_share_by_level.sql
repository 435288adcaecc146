-- 0040 (issue 36): the largest share of a sale payable with points may be
-- set per level (silver, gold, diamond); none is the programme's share.
ALTER TABLE `tenants` ADD COLUMN `points_spend_max_share_silver` text NULL;
ALTER TABLE `tenants` ADD COLUMN `points_spend_max_share_gold` text NULL;
ALTER TABLE `tenants` ADD COLUMN `points_spend_max_share_diamond` text NULL;
