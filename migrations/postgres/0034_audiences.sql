-- 0034 (issue 37): a segment may be an audience, its members kept by a rule
-- over the customers' facts instead of added by hand.
ALTER TABLE "segments" ADD COLUMN IF NOT EXISTS "rule" text NULL;
