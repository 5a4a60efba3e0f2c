# Affected rows, insert ids and info strings of writes.
CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, k INT UNIQUE, v VARCHAR(5));
-- lockstep: no info string after a multi-row INSERT (MySQL sends "Records: 3  Duplicates: 0  Warnings: 0")
-- expect: ok affected=3 insert_id=1
-- expect: status: autocommit
INSERT INTO t (k, v) VALUES (1, 'a'), (2, 'b'), (3, 'c');
SELECT LAST_INSERT_ID();
INSERT INTO t (k, v) VALUES (4, 'd');
UPDATE t SET v = 'a' WHERE k <= 2;
UPDATE t SET v = 'x' WHERE k > 100;
-- lockstep: the OK packet's insert id after ON DUPLICATE KEY UPDATE is the session's last generated id; MySQL gives the updated row's AUTO_INCREMENT value (1), and 0 when nothing changed
-- expect: ok affected=2 insert_id=4
-- expect: status: autocommit
INSERT INTO t (k, v) VALUES (1, 'z') ON DUPLICATE KEY UPDATE v = 'z';
-- lockstep: the OK packet's insert id after ON DUPLICATE KEY UPDATE is the session's last generated id; MySQL gives the updated row's AUTO_INCREMENT value (1), and 0 when nothing changed
-- expect: ok affected=0 insert_id=4
-- expect: status: autocommit
INSERT INTO t (k, v) VALUES (1, 'z') ON DUPLICATE KEY UPDATE v = 'z';
-- lockstep: the OK packet's insert id after REPLACE with an explicit id is the session's last generated id; MySQL gives the id written (2)
-- expect: ok affected=2 insert_id=4
-- expect: status: autocommit
REPLACE INTO t (id, k, v) VALUES (2, 2, 'r');
-- lockstep: the OK packet's insert id after REPLACE with an explicit id is the session's last generated id; MySQL gives the id written (10)
-- expect: ok affected=1 insert_id=4
-- expect: status: autocommit
REPLACE INTO t (id, k, v) VALUES (10, 10, 'n');
-- lockstep: a row ignored as a duplicate uses up an AUTO_INCREMENT value (MySQL gives it back: 11), and no info string
-- expect: ok affected=1 insert_id=12
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
-- lockstep: no info string after a multi-row INSERT (MySQL sends "Records: 3  Duplicates: 1  Warnings: 0")
-- expect: ok affected=4 insert_id=0
-- expect: status: autocommit
INSERT INTO u VALUES (2, 1, 'c'), (2, 2, 'd'), (3, 3, 'e') ON DUPLICATE KEY UPDATE s = VALUES(s);
INSERT INTO u VALUES (3, 3, 'e') ON DUPLICATE KEY UPDATE s = 'toolong';
-- lockstep: REPLACE of a row by an identical one counts 2 affected rows, as go-mysql-server counts a delete and an insert (MySQL finds the record unchanged: 1); the fast path keeps go-mysql-server's count
-- expect: ok affected=2 insert_id=0
-- expect: status: autocommit
REPLACE INTO u VALUES (3, 3, 'e');
-- lockstep: no info string after a multi-row REPLACE (MySQL sends "Records: 2  Duplicates: 1  Warnings: 0")
-- expect: ok affected=3 insert_id=0
-- expect: status: autocommit
REPLACE INTO u VALUES (4, 4, 'f'), (4, 5, 'g');
SELECT * FROM u ORDER BY id;
-- lockstep: follows from the AUTO_INCREMENT value the ignored row used up above (MySQL: 13)
-- expect: columns: LAST_INSERT_ID() INTEGER unsigned
-- expect: row: '14'
-- expect: status: autocommit
SELECT LAST_INSERT_ID();
