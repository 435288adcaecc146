-- 0013: a redemption rolled back frees its validation token for the campaign.
DROP INDEX `redemption_validation_token_id_campaign_id`;
CREATE UNIQUE INDEX `redemption_validation_token_id_campaign_id` ON `redemptions` (`validation_token_id`, `campaign_id`) WHERE rolled_back_at IS NULL;
