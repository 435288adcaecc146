-- 0029 (issue 35): a customer's sales not processed (waiting, or failed), in registration order: a sale is processed after the customer's earlier ones.
CREATE INDEX IF NOT EXISTS `sale_tenant_id_customer_document_index_created_at` ON `sales` (`tenant_id`, `customer_document_index`, `created_at`) WHERE processed_at IS NULL;
