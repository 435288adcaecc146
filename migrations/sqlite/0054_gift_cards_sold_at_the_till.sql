-- 0054: a sale line may sell an inactive gift card (its code scanned at
-- the till), activated when the sale is processed; a card is sold by one
-- line.
ALTER TABLE `sale_items` ADD COLUMN `gift_card_id` text NULL;
CREATE UNIQUE INDEX `saleitem_tenant_id_gift_card_id` ON `sale_items` (`tenant_id`, `gift_card_id`);
