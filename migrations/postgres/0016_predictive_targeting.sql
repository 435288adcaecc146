-- 0016: campaigns may target a predictive segment; scores say whether a
-- customer is of high value, against the threshold the model keeps.
ALTER TABLE "campaigns" ADD COLUMN "predictive_segment" character varying NULL;
ALTER TABLE "churn_models" ADD COLUMN "high_value_threshold" numeric(20,8) NOT NULL DEFAULT '0';
ALTER TABLE "customer_scores" ADD COLUMN "high_value" boolean NOT NULL DEFAULT false;
