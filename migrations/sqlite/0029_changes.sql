-- The change feed (issue 34): a write that changes what the hot paths keep
-- in memory of a tenant (its campaigns' definitions, settings, stores)
-- records a change in its transaction. SQLite's commits are applied in the
-- process that made them (storage.Tx.OnCommit).
CREATE TABLE IF NOT EXISTS `changes` (`id` integer NOT NULL PRIMARY KEY AUTOINCREMENT, `created_at` datetime NOT NULL, `part` text NOT NULL, `origin` text NOT NULL DEFAULT (''), `tenant_id` text NOT NULL, CONSTRAINT `changes_tenants_tenant` FOREIGN KEY (`tenant_id`) REFERENCES `tenants` (`id`) ON DELETE NO ACTION);
CREATE INDEX IF NOT EXISTS `change_created_at` ON `changes` (`created_at`);
