-- 0049: the ledger entries that leave a points debt, for the liability by
-- day (a reversal's points beyond the balance are owed, not taken: the
-- balances are the ledger's points plus the debts). Partial, so the entries
-- every sale writes do not pay for it; few customers ever owe points. The
-- query names the condition as a literal so every plan can use it.
CREATE INDEX IF NOT EXISTS `points_entries_debts` ON `points_entries` (`tenant_id`, `customer_id`)
  WHERE `debt_after` > 0;
