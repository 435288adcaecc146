-- 0011: returns and cancellations of sales, reversals that leave a points
-- debt, redemptions rolled back.
ALTER TABLE "customers" ADD COLUMN "points_debt" bigint NOT NULL DEFAULT 0;
ALTER TABLE "points_entries" ADD COLUMN "debt_after" bigint NOT NULL DEFAULT 0;
ALTER TABLE "redemptions" ADD COLUMN "rolled_back_at" timestamptz NULL, ADD COLUMN "rollback_reason" character varying NULL;
ALTER TABLE "sale_items" ADD COLUMN "returned_quantity" numeric(20,8) NOT NULL DEFAULT '0';
ALTER TABLE "sales" ADD COLUMN "returned_amount" numeric(20,8) NOT NULL DEFAULT '0', ADD COLUMN "points_reversed" bigint NOT NULL DEFAULT 0;
CREATE TABLE "sale_returns" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "external_id" character varying NOT NULL, "kind" character varying NOT NULL, "pos_id" character varying NOT NULL DEFAULT '', "returned_at" timestamptz NOT NULL, "reason" character varying NOT NULL DEFAULT '', "lines" jsonb NOT NULL, "amount" numeric(20,8) NOT NULL, "status" character varying NOT NULL DEFAULT 'RECEIVED', "points_reversed" bigint NOT NULL DEFAULT 0, "processed_at" timestamptz NULL, "sale_id" character varying NOT NULL, "tenant_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "sale_returns_sales_returns" FOREIGN KEY ("sale_id") REFERENCES "sales" ("id") ON DELETE NO ACTION, CONSTRAINT "sale_returns_tenants_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants" ("id") ON DELETE NO ACTION);
CREATE UNIQUE INDEX "salereturn_tenant_id_sale_id_external_id" ON "sale_returns" ("tenant_id", "sale_id", "external_id");
