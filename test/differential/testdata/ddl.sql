# Primary keys added, dropped and on column prefixes.
CREATE TABLE h (a INT, b VARCHAR(10), KEY kb (b));
INSERT INTO h VALUES (1, 'x'), (2, 'y'), (2, 'z');
-- mysql8: MySQL 8 names the key as table.key in 1062 (MariaDB: 'PRIMARY')
-- expect: error 1062 (23000): Duplicate entry '2' for key 'h.PRIMARY'
-- expect: status:
ALTER TABLE h ADD PRIMARY KEY (a);
DELETE FROM h WHERE b = 'z';
INSERT INTO h VALUES (NULL, 'n');
-- mysql8: MySQL 8 refuses a NULL in a column becoming the primary key with 1138 (MariaDB: 1265 Data truncated)
-- expect: error 1138 (22004): Invalid use of NULL value
-- expect: status:
ALTER TABLE h ADD PRIMARY KEY (a);
DELETE FROM h WHERE a IS NULL;
-- lockstep: ALTER TABLE sends no info string (MySQL 8: "Records: 0  Duplicates: 0  Warnings: 0" for an in-place rebuild; MariaDB copies and counts the rows)
-- expect: ok affected=0 insert_id=0
-- expect: status: autocommit
ALTER TABLE h ADD PRIMARY KEY (a);
-- mysql8: MySQL 8 names the key as table.key in 1062 (MariaDB: 'PRIMARY')
-- expect: error 1062 (23000): Duplicate entry '2' for key 'h.PRIMARY'
-- expect: status:
INSERT INTO h VALUES (2, 'q');
SELECT * FROM h WHERE a = 2;
-- ignore: types
SELECT COLUMN_NAME, IS_NULLABLE, COLUMN_KEY FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'h' ORDER BY ORDINAL_POSITION;
-- lockstep: ALTER TABLE sends no info string (MySQL 8: "Records: 0  Duplicates: 0  Warnings: 0" for an in-place rebuild; MariaDB copies and counts the rows)
-- expect: ok affected=0 insert_id=0
-- expect: status: autocommit
ALTER TABLE h DROP PRIMARY KEY;
INSERT INTO h VALUES (2, 'q');
SELECT * FROM h ORDER BY a, b;
-- lockstep: ALTER TABLE sends no info string (MySQL 8: "Records: 0  Duplicates: 0  Warnings: 0" for an in-place rebuild; MariaDB copies and counts the rows)
-- expect: ok affected=0 insert_id=0
-- expect: status: autocommit
ALTER TABLE h ADD PRIMARY KEY (b(1));
-- lockstep: ALTER TABLE sends no info string (MySQL 8: "Records: 0  Duplicates: 0  Warnings: 0" for an in-place rebuild; MariaDB copies and counts the rows)
-- expect: ok affected=0 insert_id=0
-- expect: status: autocommit
ALTER TABLE h DROP PRIMARY KEY, ADD PRIMARY KEY (b);
INSERT INTO h VALUES (9, 'qq');
SELECT a, b FROM h ORDER BY b;
CREATE TABLE ai (id INT AUTO_INCREMENT PRIMARY KEY, v INT);
ALTER TABLE ai DROP PRIMARY KEY;
CREATE TABLE g (v VARCHAR(50), n INT, PRIMARY KEY (v(3))) COMMENT='kept';
INSERT INTO g VALUES ('abcdef', 1), ('xyz', 2);
-- mysql8: MySQL 8 names the key as table.key in 1062 (MariaDB: 'PRIMARY')
-- expect: error 1062 (23000): Duplicate entry 'abc' for key 'g.PRIMARY'
-- expect: status:
INSERT INTO g VALUES ('abcxyz', 3);
SELECT * FROM g WHERE v = 'abcdef';
SELECT COUNT(*) FROM g WHERE v = 'abcxyz';
UPDATE g SET v = 'abq' WHERE n = 1;
SELECT * FROM g ORDER BY v;
-- ignore: types
SELECT TABLE_COMMENT FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'g';
SELECT INDEX_NAME, COLUMN_NAME, SUB_PART FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'g';
FLUSH LOGS;
FLUSH LOCAL LOGS;
FLUSH NO_WRITE_TO_BINLOG TABLES;
FLUSH STATUS;
FLUSH ERROR LOGS;
FLUSH SLOW LOGS;
FLUSH PRIVILEGES;
# A trigger goes with its table through RENAME TABLE and ALTER TABLE ...
# RENAME (pt-online-schema-change swaps tables so), and DROP TABLE drops it.
CREATE TABLE tr_log (id INT);
CREATE TABLE tr_a (id INT PRIMARY KEY);
CREATE TABLE tr_b (id INT PRIMARY KEY);
CREATE TRIGGER tr_ins AFTER INSERT ON tr_a FOR EACH ROW INSERT INTO tr_log VALUES (NEW.id);
RENAME TABLE tr_a TO tr_old, tr_b TO tr_a;
INSERT INTO tr_a VALUES (1);
INSERT INTO tr_old VALUES (2);
SELECT id FROM tr_log;
SELECT trigger_name AS n, event_object_table AS t FROM information_schema.triggers WHERE trigger_schema = DATABASE();
ALTER TABLE tr_old RENAME TO tr_older;
INSERT INTO tr_older VALUES (3);
SELECT id FROM tr_log ORDER BY id;
DROP TABLE tr_older;
SELECT COUNT(*) FROM information_schema.triggers WHERE trigger_schema = DATABASE();
# SCHEMA is DATABASE (ALTER SCHEMA and SHOW SCHEMAS LIKE were 1064).
CREATE SCHEMA IF NOT EXISTS diff_ddl_s2;
ALTER SCHEMA diff_ddl_s2 DEFAULT CHARACTER SET utf8mb4;
CREATE TABLE diff_ddl_s2.t1 (id INT PRIMARY KEY);
CREATE TABLE diff_ddl_s2.t2 (id INT PRIMARY KEY);
SHOW SCHEMAS LIKE 'diff_ddl_s%';
DROP SCHEMA diff_ddl_s2;
DROP DATABASE IF EXISTS diff_ddl_s2;
SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'diff_ddl_s2';
