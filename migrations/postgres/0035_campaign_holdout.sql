-- 0035 (issue 37, experiments): a campaign may hold out a share of its target
-- customers as a control group, in basis points (0 = no one).
ALTER TABLE "campaigns" ADD COLUMN IF NOT EXISTS "holdout_basis_points" bigint NOT NULL DEFAULT 0;
