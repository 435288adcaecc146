-- The origins of a tenant's back-office web apps allowed to call the API
-- from a browser (CORS, issue 39); none by default.
ALTER TABLE `tenants` ADD COLUMN `cors_origins` json NULL;
-- (PostgreSQL also notifies outbox commits here; on SQLite a commit wakes
-- this process's subscriptions, see storage.DB.Listen.)
