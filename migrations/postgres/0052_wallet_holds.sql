-- 0052: cashback spent through holds: the holds of money wallets (cashback
-- now, gift cards later), and the programme's rules for spending cashback
-- (the channels, the largest share of a sale or order, the fewest R$ at
-- once), set for every tenant to their defaults: both channels, the whole
-- sale, any amount.
ALTER TABLE "tenants" ADD COLUMN "cashback_spend_channels" jsonb NOT NULL DEFAULT '["ecommerce", "pdv"]', ADD COLUMN "cashback_spend_max_share" numeric(20,8) NOT NULL DEFAULT '1', ADD COLUMN "cashback_spend_min" numeric(20,8) NOT NULL DEFAULT '0';
CREATE TABLE "wallet_holds" ("id" character varying NOT NULL, "created_at" timestamptz NOT NULL, "wallet" character varying NOT NULL, "gift_card_id" character varying NULL, "channel" character varying NOT NULL, "session" character varying NOT NULL, "store_code" character varying NOT NULL DEFAULT '', "cents" bigint NOT NULL, "status" character varying NOT NULL DEFAULT 'open', "expires_at" timestamptz NOT NULL, "sale_id" character varying NULL, "order_id" character varying NULL, "closed_at" timestamptz NULL, "tenant_id" character varying NOT NULL, "customer_id" character varying NOT NULL, PRIMARY KEY ("id"), CONSTRAINT "wallet_holds_tenants_tenant" FOREIGN KEY ("tenant_id") REFERENCES "tenants" ("id") ON DELETE NO ACTION, CONSTRAINT "wallet_holds_customers_customer" FOREIGN KEY ("customer_id") REFERENCES "customers" ("id") ON DELETE NO ACTION);
CREATE UNIQUE INDEX "wallethold_tenant_id_session" ON "wallet_holds" ("tenant_id", "session");
CREATE INDEX "wallethold_tenant_id_customer_id_wallet_status" ON "wallet_holds" ("tenant_id", "customer_id", "wallet", "status");
CREATE INDEX "wallethold_status_expires_at" ON "wallet_holds" ("status", "expires_at");
