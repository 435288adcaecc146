-- 0043: name search by word prefix ("silv" finds "Silva", "ouza" no longer
-- finds "Souza"); e-mail and external id are matched exactly. The FTS5
-- trigram index of 0008 gives way to a word index over the folded name
-- (unicode61 tokenizer: words are runs of letters and digits) with prefix
-- indexes of 1 to 20 characters, so that a term's word of up to 20
-- characters is one doclist FTS5 can skip through (a longer one merges the
-- doclists of the words it begins; a prefix index holds only the words at
-- least as long as it, so the long ones cost little). External content keyed
-- by the customers' rowid, kept by triggers as before.
DROP TRIGGER `customer_search_insert`;
DROP TRIGGER `customer_search_delete`;
DROP TRIGGER `customer_search_update`;
DROP TABLE `customer_search`;
CREATE VIRTUAL TABLE `customer_search` USING fts5(`name_search`, content = 'customers', content_rowid = 'rowid', tokenize = 'unicode61 remove_diacritics 2', prefix = '1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20');
INSERT INTO `customer_search` (`customer_search`) VALUES ('rebuild');
CREATE TRIGGER `customer_search_insert` AFTER INSERT ON `customers` BEGIN
  INSERT INTO `customer_search` (`rowid`, `name_search`) VALUES (new.`rowid`, new.`name_search`);
END;
CREATE TRIGGER `customer_search_delete` AFTER DELETE ON `customers` BEGIN
  INSERT INTO `customer_search` (`customer_search`, `rowid`, `name_search`) VALUES ('delete', old.`rowid`, old.`name_search`);
END;
CREATE TRIGGER `customer_search_update` AFTER UPDATE OF `name_search` ON `customers` BEGIN
  INSERT INTO `customer_search` (`customer_search`, `rowid`, `name_search`) VALUES ('delete', old.`rowid`, old.`name_search`);
  INSERT INTO `customer_search` (`rowid`, `name_search`) VALUES (new.`rowid`, new.`name_search`);
END;
