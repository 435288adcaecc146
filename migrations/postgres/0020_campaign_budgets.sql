-- 0020: a campaign's money budgets (in all, per store, per period) with what
-- it gave so far, and the store each redemption was given at.
ALTER TABLE "campaigns" ADD COLUMN "budget_total" numeric(20,8) NULL, ADD COLUMN "budget_per_store" numeric(20,8) NULL, ADD COLUMN "budget_period" character varying NULL, ADD COLUMN "budget_per_period" numeric(20,8) NULL, ADD COLUMN "budget_spent" numeric(20,8) NULL, ADD COLUMN "budget_spent_by" jsonb NULL;
ALTER TABLE "redemptions" ADD COLUMN "store_code" character varying NOT NULL DEFAULT '';
