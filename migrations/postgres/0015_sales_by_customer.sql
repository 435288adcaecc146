-- 0015: a customer's purchases, read by the churn scoring in batches of customers.
CREATE INDEX "sale_tenant_id_customer_id_sold_at" ON "sales" ("tenant_id", "customer_id", "sold_at");
