-- 0039 (issue 37, audiences): the audit trail keeps the values before and
-- after a change of the fields that hold no personal data and by which a
-- change is judged (an audience's rule).
ALTER TABLE "audit_events" ADD COLUMN IF NOT EXISTS "changes" jsonb NULL;
