-- 0044 (issue 34): validation tokens are signed and carry the cart and the
-- benefits they promise; validate writes nothing, and a token's first
-- redemption writes its row, keyed by the token's id, binding it to one
-- order. The columns of a stored validation go. The tokens validated
-- before the upgrade were random and cannot be read back: redeem refuses
-- them (422 validation_error, docs/decisions.md), so their rows go too,
-- but for those a redemption refers to.
DELETE FROM `validation_tokens` WHERE NOT EXISTS (SELECT 1 FROM `redemptions` WHERE `redemptions`.`validation_token_id` = `validation_tokens`.`id`);
DROP INDEX IF EXISTS `validationtoken_token_hash`;
ALTER TABLE `validation_tokens` DROP COLUMN `token_hash`;
ALTER TABLE `validation_tokens` DROP COLUMN `cart`;
ALTER TABLE `validation_tokens` DROP COLUMN `benefits`;
ALTER TABLE `validation_tokens` DROP COLUMN `campaign_ids`;
