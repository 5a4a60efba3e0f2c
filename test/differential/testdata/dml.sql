# Affected rows, insert ids and info strings of writes.
CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k INT UNIQUE, v VARCHAR(5));
INSERT INTO t (k, v) VALUES (1, 'a'), (2, 'b'), (3, 'c');
SELECT LAST_INSERT_ID();
INSERT INTO t (k, v) VALUES (4, 'd');
UPDATE t SET v = 'a' WHERE k <= 2;
UPDATE t SET v = 'x' WHERE k > 100;
INSERT INTO t (k, v) VALUES (1, 'z') ON DUPLICATE KEY UPDATE v = 'z';
INSERT INTO t (k, v) VALUES (1, 'z') ON DUPLICATE KEY UPDATE v = 'z';
REPLACE INTO t (id, k, v) VALUES (2, 2, 'r');
REPLACE INTO t (id, k, v) VALUES (10, 10, 'n');
-- lockstep: a row ignored as a duplicate uses up an AUTO_INCREMENT value (MySQL gives it back: 11)
-- expect: ok affected=1 insert_id=12
-- expect: info: Records: 2  Duplicates: 1  Warnings: 1
-- expect: status: autocommit
-- expect: warning: Warning 1062 Duplicate entry '3' for key 't.k'
INSERT IGNORE INTO t (k, v) VALUES (3, 'dup'), (11, 'new');
DELETE FROM t WHERE k IN (10, 11);
SELECT * FROM t ORDER BY id;
INSERT INTO t (k, v) VALUES (20, 'toolong');
-- lockstep: follows from the AUTO_INCREMENT value the ignored row used up above (MySQL: 13)
-- expect: ok affected=1 insert_id=14
-- expect: status: autocommit
INSERT INTO t (k, v) VALUES (NULL, NULL);
-- lockstep: follows from the AUTO_INCREMENT value the ignored row used up above (MySQL: 13)
-- expect: columns: id LONG, k LONG, v VAR_STRING
-- expect: row: '14' | NULL | NULL
-- expect: status: autocommit
SELECT id, k, v FROM t WHERE k IS NULL;
DELETE FROM t;
# Upserts into a table whose only unique key is the primary key and that has
# no AUTO_INCREMENT column (the fast path takes these): affected rows 1 for an
# insert, 2 for a change, 0 for no change; no insert id, although the session
# has a LAST_INSERT_ID from above.
CREATE TABLE u (id INT PRIMARY KEY, n INT NOT NULL, s VARCHAR(5), KEY (n));
INSERT INTO u VALUES (1, 1, 'a') ON DUPLICATE KEY UPDATE n = n + 1;
INSERT INTO u VALUES (1, 1, 'a') ON DUPLICATE KEY UPDATE n = n + 1;
INSERT INTO u VALUES (1, 5, 'b') ON DUPLICATE KEY UPDATE s = VALUES(s), n = n + VALUES(n);
INSERT INTO u VALUES (1, 5, 'b') ON DUPLICATE KEY UPDATE s = VALUES(s);
-- lockstep: no info string after a multi-row INSERT ... ON DUPLICATE KEY UPDATE (MySQL sends "Records: 3  Duplicates: 1  Warnings: 0"; its Duplicates, the rows updated, cannot be told from the affected count: internal/sqlfront/insertinfo.go)
-- expect: ok affected=4 insert_id=0
-- expect: status: autocommit
INSERT INTO u VALUES (2, 1, 'c'), (2, 2, 'd'), (3, 3, 'e') ON DUPLICATE KEY UPDATE s = VALUES(s);
INSERT INTO u VALUES (3, 3, 'e') ON DUPLICATE KEY UPDATE s = 'toolong';
-- lockstep: REPLACE of a row by an identical one counts 2 affected rows, as go-mysql-server counts a delete and an insert (MySQL finds the record unchanged: 1); the fast path keeps go-mysql-server's count
-- expect: ok affected=2 insert_id=0
-- expect: status: autocommit
REPLACE INTO u VALUES (3, 3, 'e');
REPLACE INTO u VALUES (4, 4, 'f'), (4, 5, 'g');
SELECT * FROM u ORDER BY id;
-- lockstep: follows from the AUTO_INCREMENT value the ignored row used up above (MySQL: 13)
-- expect: columns: LAST_INSERT_ID() INTEGER unsigned
-- expect: row: '14'
-- expect: status: autocommit
SELECT LAST_INSERT_ID();
# The OK packet's insert id (what a client reads as lastrowid) on a table
# with an AUTO_INCREMENT column: the first value the statement generated;
# else the id of the last row it inserted or changed; else 0.
CREATE TABLE a (id BIGINT AUTO_INCREMENT PRIMARY KEY, k INT UNIQUE, n INT NOT NULL DEFAULT 0);
INSERT INTO a (id, k) VALUES (5, 5), (7, 7);
INSERT INTO a (k) VALUES (103) ON DUPLICATE KEY UPDATE n = n + 1;
INSERT INTO a (k) VALUES (7) ON DUPLICATE KEY UPDATE n = n + 1;
-- lockstep: no info string after a multi-row INSERT ... ON DUPLICATE KEY UPDATE (MySQL sends "Records: 2  Duplicates: 2  Warnings: 0"; its Duplicates, the rows updated, cannot be told from the affected count: internal/sqlfront/insertinfo.go)
-- expect: ok affected=4 insert_id=7
-- expect: status: autocommit
INSERT INTO a (k) VALUES (5), (7) ON DUPLICATE KEY UPDATE n = n + 1;
INSERT INTO a (k) VALUES (5) ON DUPLICATE KEY UPDATE n = n;
INSERT INTO a (id, k) VALUES (7, 70) ON DUPLICATE KEY UPDATE k = VALUES(k);
REPLACE INTO a (k, n) VALUES (103, 9);
REPLACE INTO a (id, k, n) VALUES (5, 5, 9);
-- lockstep: no info string after a multi-row INSERT ... ON DUPLICATE KEY UPDATE (MySQL sends "Records: 2  Duplicates: 0  Warnings: 0"; its Duplicates, the rows updated, cannot be told from the affected count: internal/sqlfront/insertinfo.go)
-- expect: ok affected=2 insert_id=14
-- expect: status: autocommit
INSERT INTO a (k) VALUES (200), (201) ON DUPLICATE KEY UPDATE n = 0;
INSERT INTO a (k) VALUES (200) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id);
SELECT LAST_INSERT_ID();
# An explicit id then generated ones: the first generated. (InnoDB reserves
# a value per row for such a "mixed-mode" insert, and so leaves a gap
# before the next generated value, which lockstep does not; nothing after
# this statement depends on that.)
INSERT INTO a (id, k) VALUES (100, 100), (NULL, 101), (NULL, 102);
SELECT id, k, n FROM a ORDER BY id;
DROP TABLE a;
# DEFAULT for the AUTO_INCREMENT column generates, as NULL does; with
# NO_AUTO_VALUE_ON_ZERO a 0 is an explicit id (go-mysql-server's own tests
# expect the first row's value in these cases; MySQL sends the first
# generated one, or the last row's explicit id).
CREATE TABLE b (pk INT AUTO_INCREMENT PRIMARY KEY, e ENUM('hi', 'bye'));
INSERT INTO b (pk) VALUES (10), (DEFAULT);
INSERT INTO b (pk) VALUES (20), (DEFAULT), (DEFAULT);
SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO,STRICT_TRANS_TABLES';
-- lockstep: generated 23 and 24 (InnoDB reserves a value per row for the mixed-mode insert above, 21-23, where lockstep generated 21 and 22; so here 24 and 25, insert id 24) — the first generated value either way
-- expect: ok affected=4 insert_id=23
-- expect: info: Records: 4  Duplicates: 0  Warnings: 0
-- expect: status: autocommit
INSERT INTO b (pk) VALUES (0), (1), (NULL), (NULL);
SET SESSION sql_mode = DEFAULT;
-- lockstep: an invalid ENUM value under IGNORE raises Note 1105 "value invalid is not valid for this Enum" (MySQL 8: Warning 1265 Data truncated for column 'e' at row 1)
-- expect: ok affected=3 insert_id=33
-- expect: info: Records: 3  Duplicates: 0  Warnings: 1
-- expect: status: autocommit
-- expect: warning: Note 1105 value invalid is not valid for this Enum
INSERT IGNORE INTO b VALUES (31, 'invalid'), (32, 'bye'), (33, NULL);
-- lockstep: the rows 23 and 24 (InnoDB: 24 and 25; see the mixed-mode insert above)
-- expect: columns: pk LONG, e STRING
-- expect: row: '0' | NULL
-- expect: row: '1' | NULL
-- expect: row: '10' | NULL
-- expect: row: '11' | NULL
-- expect: row: '20' | NULL
-- expect: row: '21' | NULL
-- expect: row: '22' | NULL
-- expect: row: '23' | NULL
-- expect: row: '24' | NULL
-- expect: row: '31' | ''
-- expect: row: '32' | 'bye'
-- expect: row: '33' | NULL
-- expect: status: autocommit
SELECT pk, e FROM b ORDER BY pk;
DROP TABLE b;

# The info string of INSERT and REPLACE (internal/sqlfront/insertinfo.go):
# several VALUES rows or any INSERT ... SELECT. Each shape runs twice: the
# second time on the fast path where it takes the statement.
CREATE TABLE f (id INT PRIMARY KEY, v INT);
INSERT INTO f VALUES (1, 1), (2, 2), (3, 3);
INSERT INTO f VALUES (4, 4), (5, 5);
REPLACE INTO f VALUES (1, 10), (6, 6);
REPLACE INTO f VALUES (2, 20), (7, 7);
INSERT INTO f VALUES (8, 8);
-- mysql8: MySQL 8 names the key with its table
-- expect: ok affected=1 insert_id=0
-- expect: info: Records: 2  Duplicates: 1  Warnings: 1
-- expect: status: autocommit
-- expect: warning: Warning 1062 Duplicate entry '8' for key 'f.PRIMARY'
INSERT IGNORE INTO f VALUES (8, 80), (9, 9);
CREATE TABLE f2 (id INT PRIMARY KEY, v INT);
INSERT INTO f2 SELECT id, v FROM f WHERE id = 1;
INSERT INTO f2 SELECT id, v FROM f WHERE id > 100;
-- mysql8: MySQL 8 names the key with its table
-- expect: ok affected=2 insert_id=0
-- expect: info: Records: 3  Duplicates: 1  Warnings: 1
-- expect: status: autocommit
-- expect: warning: Warning 1062 Duplicate entry '1' for key 'f2.PRIMARY'
INSERT IGNORE INTO f2 SELECT id, v FROM f WHERE id < 4;
REPLACE INTO f2 SELECT id, v + 1 FROM f WHERE id < 3;
SELECT * FROM f2 ORDER BY id;
# Statement modifiers of MyISAM-era engines, which InnoDB ignores (1064
# before: go-mysql-server's parser has none of them).
CREATE TABLE mo (id INT PRIMARY KEY, v INT);
INSERT LOW_PRIORITY INTO mo VALUES (1, 1);
-- mysql8: MySQL 8 names the key as table.key in 1062 (MariaDB: 'PRIMARY')
-- expect: ok affected=1 insert_id=0
-- expect: info: Records: 2  Duplicates: 1  Warnings: 1
-- expect: status: autocommit
-- expect: warning: Warning 1062 Duplicate entry '1' for key 'mo.PRIMARY'
INSERT HIGH_PRIORITY IGNORE INTO mo VALUES (1, 9), (2, 2);
REPLACE LOW_PRIORITY INTO mo VALUES (2, 20);
UPDATE LOW_PRIORITY mo SET v = v + 1 WHERE id = 1;
DELETE LOW_PRIORITY QUICK FROM mo WHERE id = 5;
SELECT HIGH_PRIORITY SQL_SMALL_RESULT SQL_BUFFER_RESULT id, v FROM mo ORDER BY id;
SELECT DISTINCT SQL_BIG_RESULT v FROM mo ORDER BY v;
DELETE IGNORE FROM mo WHERE id = 2;
SELECT id, v FROM mo ORDER BY id;
CREATE TABLE mo_p (id INT PRIMARY KEY);
CREATE TABLE mo_c (id INT PRIMARY KEY, p INT, FOREIGN KEY (p) REFERENCES mo_p (id));
INSERT INTO mo_p VALUES (1), (2);
INSERT INTO mo_c VALUES (1, 1);
-- lockstep: DELETE IGNORE runs as DELETE: an error IGNORE makes a warning (a foreign key here) fails the statement; MySQL skips the row with Warning 1451 and deletes the others
-- expect: error 1451 (23000): Cannot delete or update a parent row: a foreign key constraint fails (`diff_dml`.`mo_c`, CONSTRAINT `mo_c_ibfk_1` FOREIGN KEY (`p`) REFERENCES `mo_p` (`id`))
-- expect: status: 
DELETE IGNORE FROM mo_p;
-- lockstep: the DELETE IGNORE above deleted nothing (MySQL: row 2, which no foreign key holds)
-- expect: columns: id LONG
-- expect: row: '1'
-- expect: row: '2'
-- expect: status: autocommit
SELECT id FROM mo_p ORDER BY id;
# Generated columns: DEFAULT is their only value; under a non-strict
# sql_mode (mariadb-dump's) a value is ignored with warning 1906.
CREATE TABLE gen (a INT PRIMARY KEY, b INT, s INT AS (a + b) STORED, v INT AS (a * b) VIRTUAL);
INSERT INTO gen VALUES (1, 2, DEFAULT, DEFAULT);
-- mysql8: MySQL 8 refuses a generated column's value with 3105 in every mode; MariaDB's strict mode says 1906 as an error
-- expect: error 3105 (HY000): The value specified for generated column 's' in table 'gen' is not allowed.
-- expect: status: 
INSERT INTO gen VALUES (2, 3, 0, 0);
SET SESSION sql_mode = 'NO_AUTO_VALUE_ON_ZERO';
INSERT INTO gen VALUES (3, 4, 0, 0);
SELECT * FROM gen ORDER BY a;
SET SESSION sql_mode = 'ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';
