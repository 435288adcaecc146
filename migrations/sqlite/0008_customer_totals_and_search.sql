-- 0008: a list's total and a search must not grow with the tenant.
-- Each tenant's customer count is kept by triggers, so the unfiltered list
-- total is read, not counted. An FTS5 trigram index over the folded name and
-- the e-mail key answers substring searches of three or more characters
-- without scanning the tenant (it is external-content: it stores only the
-- index, keyed by the customers' rowid).
ALTER TABLE `tenants` ADD COLUMN `customer_count` integer NOT NULL DEFAULT (0);
UPDATE `tenants` SET `customer_count` = (SELECT count(*) FROM `customers` WHERE `customers`.`tenant_id` = `tenants`.`id`);
CREATE TRIGGER `customers_count_insert` AFTER INSERT ON `customers` BEGIN
  UPDATE `tenants` SET `customer_count` = `customer_count` + 1 WHERE `id` = new.`tenant_id`;
END;
CREATE TRIGGER `customers_count_delete` AFTER DELETE ON `customers` BEGIN
  UPDATE `tenants` SET `customer_count` = `customer_count` - 1 WHERE `id` = old.`tenant_id`;
END;
CREATE VIRTUAL TABLE `customer_search` USING fts5(`name_search`, `email_key`, content = 'customers', content_rowid = 'rowid', tokenize = 'trigram');
INSERT INTO `customer_search` (`customer_search`) VALUES ('rebuild');
CREATE TRIGGER `customer_search_insert` AFTER INSERT ON `customers` BEGIN
  INSERT INTO `customer_search` (`rowid`, `name_search`, `email_key`) VALUES (new.`rowid`, new.`name_search`, new.`email_key`);
END;
CREATE TRIGGER `customer_search_delete` AFTER DELETE ON `customers` BEGIN
  INSERT INTO `customer_search` (`customer_search`, `rowid`, `name_search`, `email_key`) VALUES ('delete', old.`rowid`, old.`name_search`, old.`email_key`);
END;
CREATE TRIGGER `customer_search_update` AFTER UPDATE OF `name_search`, `email_key` ON `customers` BEGIN
  INSERT INTO `customer_search` (`customer_search`, `rowid`, `name_search`, `email_key`) VALUES ('delete', old.`rowid`, old.`name_search`, old.`email_key`);
  INSERT INTO `customer_search` (`rowid`, `name_search`, `email_key`) VALUES (new.`rowid`, new.`name_search`, new.`email_key`);
END;
