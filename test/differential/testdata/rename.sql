# RENAME TABLE between databases (issue 33): the scenario's database and a
# second one, diff_rename_b.
DROP DATABASE IF EXISTS diff_rename_b;
CREATE DATABASE diff_rename_b;
CREATE TABLE p (id INT PRIMARY KEY);
INSERT INTO p VALUES (1), (2);
CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, pid INT, v VARCHAR(10), KEY kv (v), CONSTRAINT tfk FOREIGN KEY (pid) REFERENCES p (id));
INSERT INTO t (pid, v) VALUES (1, 'x'), (2, 'y');
CREATE TABLE w (id INT PRIMARY KEY);
INSERT INTO w VALUES (5);
CREATE TABLE diff_rename_b.u (id INT PRIMARY KEY);
INSERT INTO diff_rename_b.u VALUES (10);
CREATE TABLE trg (id INT PRIMARY KEY);
CREATE TRIGGER trg_bi BEFORE INSERT ON trg FOR EACH ROW SET NEW.id = NEW.id + 1;
CREATE VIEW v AS SELECT id FROM p;
# Errors: the target exists, the source is missing, a database is unknown,
# a table with triggers or a view would change database.
RENAME TABLE w TO diff_rename_b.u;
RENAME TABLE nope TO diff_rename_b.nope;
-- mysql8: MySQL 8 answers 1049 for the unknown target database (sql_rename.cc, do_rename); MariaDB fails in the engine (1025, errno 168)
-- expect: error 1049 (42000): Unknown database 'diff_rename_nodb'
-- expect: status:
RENAME TABLE w TO diff_rename_nodb.w;
RENAME TABLE trg TO diff_rename_b.trg;
-- mysql8: MySQL 8's ER_FORBID_SCHEMA_CHANGE text ends with a period (MariaDB's does not)
-- expect: error 1450 (HY000): Changing schema from 'diff_rename' to 'diff_rename_b' is not allowed.
-- expect: status:
RENAME TABLE v TO diff_rename_b.v;
# A failing pair undoes the pairs before it.
RENAME TABLE w TO diff_rename_b.w, nope TO diff_rename_b.nope;
RENAME TABLE w TO w2, nope TO z;
-- unordered
SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ('diff_rename', 'diff_rename_b') AND TABLE_TYPE = 'BASE TABLE';
# Several pairs, both ways.
RENAME TABLE t TO diff_rename_b.t, diff_rename_b.u TO u;
-- unordered
SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA IN ('diff_rename', 'diff_rename_b') AND TABLE_TYPE = 'BASE TABLE';
SELECT * FROM t;
SELECT id, pid, v FROM diff_rename_b.t ORDER BY id;
SELECT id FROM diff_rename_b.t WHERE v = 'y';
SELECT * FROM u;
# The moved table's key still references p here; its counter came along.
INSERT INTO diff_rename_b.t (pid, v) VALUES (9, 'q');
DELETE FROM p WHERE id = 2;
INSERT INTO diff_rename_b.t (pid, v) VALUES (1, 'n');
SELECT id, pid, v FROM diff_rename_b.t ORDER BY id;
SELECT CONSTRAINT_SCHEMA, CONSTRAINT_NAME, TABLE_NAME, REFERENCED_TABLE_NAME FROM information_schema.REFERENTIAL_CONSTRAINTS WHERE CONSTRAINT_SCHEMA IN ('diff_rename', 'diff_rename_b');
SELECT TABLE_SCHEMA, TABLE_NAME, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA IN ('diff_rename', 'diff_rename_b') AND REFERENCED_TABLE_NAME IS NOT NULL;
# With a view of the same name: a view renamed within its database.
RENAME TABLE v TO v2;
SELECT * FROM v2 ORDER BY id;
# Back, by ALTER TABLE.
ALTER TABLE diff_rename_b.t RENAME TO t;
SELECT COUNT(*) FROM t;
# ALTER TABLE ... RENAME to another database with other changes: the
# changes, then the move, whatever the clauses' order; nothing when the move
# cannot be made (the target exists, the database is unknown).
# (lockstep's ALTER TABLE sends no "Records: 0  Duplicates: 0" info.)
-- ignore: info
ALTER TABLE w ADD COLUMN c INT DEFAULT 7, RENAME TO diff_rename_b.w;
SELECT * FROM diff_rename_b.w;
-- ignore: info
ALTER TABLE diff_rename_b.w RENAME TO w, ADD INDEX kc (c), ADD COLUMN d INT;
SELECT id, c, d FROM w;
SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = 'diff_rename' AND TABLE_NAME = 'w' ORDER BY INDEX_NAME;
CREATE TABLE diff_rename_b.x (id INT PRIMARY KEY);
ALTER TABLE w ADD COLUMN e INT, RENAME TO diff_rename_b.x;
ALTER TABLE w ADD COLUMN e INT, RENAME TO diff_rename_nodb.w;
SELECT COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'diff_rename' AND TABLE_NAME = 'w' ORDER BY ORDINAL_POSITION;
SELECT TABLE_NAME FROM information_schema.TABLES WHERE TABLE_SCHEMA = 'diff_rename_b' ORDER BY TABLE_NAME;
DROP DATABASE diff_rename_b;
