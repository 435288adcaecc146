-- Bytes per row of the tables that grow with customers and sales: heap and
-- TOAST (pg_table_size), indexes (pg_indexes_size), total per row.
WITH t(name) AS (VALUES ('customers'), ('sales'), ('sale_items'), ('sale_payments'), ('points_entries'),
                        ('points_lots'), ('redemptions'), ('events'), ('webhook_deliveries'), ('river_job')),
     n AS (SELECT name, (xpath('/row/c/text()', query_to_xml(format('SELECT count(*) AS c FROM %I', name), false, true, '')))[1]::text::bigint AS rows FROM t)
SELECT name, rows,
       pg_size_pretty(pg_table_size(name::regclass)) AS table_size,
       pg_size_pretty(pg_indexes_size(name::regclass)) AS index_size,
       round(pg_table_size(name::regclass)::numeric / nullif(rows, 0)) AS table_bytes_per_row,
       round(pg_indexes_size(name::regclass)::numeric / nullif(rows, 0)) AS index_bytes_per_row,
       round(pg_total_relation_size(name::regclass)::numeric / nullif(rows, 0)) AS total_bytes_per_row
FROM n ORDER BY name;
