-- 0004: a points lot refers to its customer and entry by foreign keys.
ALTER TABLE "points_lots" ADD CONSTRAINT "points_lots_customers_customer" FOREIGN KEY ("customer_id") REFERENCES "customers" ("id") ON DELETE NO ACTION, ADD CONSTRAINT "points_lots_points_entries_entry" FOREIGN KEY ("entry_id") REFERENCES "points_entries" ("id") ON DELETE NO ACTION;
