-- 0050: on PostgreSQL the ledger's rollup trigger becomes static SQL
-- (planned once per connection instead of on every insert). SQLite's
-- triggers are static already: nothing changes here.
SELECT 1;
