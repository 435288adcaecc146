-- 0009: a sale's items and payments are read by the sale: without these indexes
-- every read scanned every line ever sold (sale processing grew with the table).
CREATE INDEX `saleitem_sale_id` ON `sale_items` (`sale_id`);
CREATE INDEX `salepayment_sale_id` ON `sale_payments` (`sale_id`);
