-- 0022: a customer whose personal data was erased (LGPD) keeps its pseudonymous record.
ALTER TABLE "customers" ADD COLUMN "erased_at" timestamptz NULL;
