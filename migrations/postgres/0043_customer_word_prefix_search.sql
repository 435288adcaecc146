-- 0043: name search by word prefix ("silv" finds "Silva", "ouza" no longer
-- finds "Souza"); e-mail and external id are matched exactly (their unique
-- and plain indexes of the tenant serve them). The trigram indexes of 0002
-- give way to a GIN index over every prefix of every word of the folded name
-- (words are runs of letters and digits): a term's words are then exact
-- entries of the index, which GIN intersects skipping through the common ones
-- (a prefix query on a word index would read every entry it matches).
DROP INDEX IF EXISTS "customer_name_search_trgm";
DROP INDEX IF EXISTS "customer_email_key_trgm";
CREATE OR REPLACE FUNCTION "fideliza_word_prefixes"(s text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT coalesce(array_agg(DISTINCT left(w, n)), '{}')
    FROM regexp_split_to_table(s, '[^[:alnum:]]+') AS w, generate_series(1, length(w)) AS n
$$;
CREATE INDEX IF NOT EXISTS "customer_name_words" ON "customers" USING gin ("fideliza_word_prefixes"("name_search"));
