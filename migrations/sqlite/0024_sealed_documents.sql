-- Documents are sealed (AES-256-GCM) by the application and found by a blind
-- index; rows from before are sealed and indexed at the next start.
ALTER TABLE `customers` ADD COLUMN `document_index` text NULL;
DROP INDEX `customer_tenant_id_document`;
CREATE UNIQUE INDEX `customer_tenant_id_document_index` ON `customers` (`tenant_id`, `document_index`);
ALTER TABLE `sales` ADD COLUMN `customer_document_index` text NULL;
CREATE INDEX `sale_tenant_id_customer_document_index` ON `sales` (`tenant_id`, `customer_document_index`);
