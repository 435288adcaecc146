-- 0055: gift card holds: a hold of a gift card bound to no one names no
-- customer (the card's code pays), and a card's holds are counted by card.
ALTER TABLE "wallet_holds" ALTER COLUMN "customer_id" DROP NOT NULL;
CREATE INDEX IF NOT EXISTS "wallethold_tenant_id_gift_card_id_status" ON "wallet_holds" ("tenant_id", "gift_card_id", "status");
ALTER TABLE "wallet_holds" DROP CONSTRAINT "wallet_holds_customers_customer", ADD CONSTRAINT "wallet_holds_customers_customer" FOREIGN KEY ("customer_id") REFERENCES "customers" ("id") ON DELETE SET NULL;
