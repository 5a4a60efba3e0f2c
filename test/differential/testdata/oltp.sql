# The statement shapes sysbench and TPC-C drivers send (index access).
CREATE TABLE sbtest (id INT AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL DEFAULT 0, c CHAR(120) NOT NULL DEFAULT '', pad CHAR(60) NOT NULL DEFAULT '', KEY k_1 (k));
INSERT INTO sbtest (k, c, pad) VALUES (5, 'c1', 'p1'), (3, 'c2', 'p2'), (5, 'c3', 'p3'), (9, 'c4', 'p4'), (1, 'c5', 'p5');
SELECT c FROM sbtest WHERE id = 3;
SELECT c FROM sbtest WHERE id BETWEEN 2 AND 4;
SELECT SUM(k) FROM sbtest WHERE id BETWEEN 1 AND 5;
SELECT c FROM sbtest WHERE id BETWEEN 1 AND 5 ORDER BY c;
SELECT DISTINCT c FROM sbtest WHERE id BETWEEN 1 AND 5 ORDER BY c;
UPDATE sbtest SET k = k + 1 WHERE id = 2;
UPDATE sbtest SET c = 'new' WHERE id = 2;
DELETE FROM sbtest WHERE id = 5;
INSERT INTO sbtest (id, k, c, pad) VALUES (5, 1, 'c5', 'p5');
SELECT id, k FROM sbtest WHERE k = 5 ORDER BY id;
SELECT id FROM sbtest WHERE (id, k) IN ((1, 5), (2, 4), (3, 3)) ORDER BY id;
SELECT id FROM sbtest WHERE id IN (4, 1, 1, NULL, 99) ORDER BY id;
SELECT id FROM sbtest WHERE id = 1 OR id = 3 OR k = 9 ORDER BY id;
SELECT id FROM sbtest ORDER BY id DESC LIMIT 2;
SELECT MIN(id), MAX(id), MAX(k) FROM sbtest WHERE k = 5;
BEGIN;
SELECT c FROM sbtest WHERE id = 1 FOR UPDATE;
-- mysql8: FOR SHARE is MySQL 8 syntax; MariaDB 10.11 has only LOCK IN SHARE MODE
-- expect: columns: c STRING
-- expect: row: 'c1'
-- expect: row: 'new'
-- expect: status: autocommit in_trans
SELECT c FROM sbtest WHERE id IN (1, 2) FOR SHARE;
UPDATE sbtest SET k = k + 1 WHERE id IN (1, 2);
COMMIT;
SELECT id, k, c FROM sbtest ORDER BY id;
