# Writes through updatable views (internal/sqlfront/viewwrite.go): INSERT,
# UPDATE and DELETE against the view's base table, the view's WHERE added,
# column aliases mapped, views over views, CHECK OPTION (1369), and MySQL's
# errors for views that are not updatable (1288) or insertable (1471).
CREATE TABLE t (id INT PRIMARY KEY, k INT, c VARCHAR(10) DEFAULT 'd');
INSERT INTO t VALUES (1, 1, 'a');
CREATE VIEW vt AS SELECT id, k FROM t;
INSERT INTO vt VALUES (2, 2);
INSERT INTO vt (k, id) VALUES (3, 3), (4, 4);
SELECT * FROM t ORDER BY id;
UPDATE vt SET k = 30 WHERE id = 3;
UPDATE vt SET k = k + 1;
SELECT * FROM vt ORDER BY id;
DELETE FROM vt WHERE id = 4;
SELECT * FROM t ORDER BY id;
CREATE VIEW va AS SELECT id AS x, k AS y, c AS z FROM t;
INSERT INTO va (x, y) VALUES (5, 5);
UPDATE va SET y = 50, z = 'q' WHERE x = 5;
UPDATE va SET va.y = 51 WHERE va.x = 5;
SELECT * FROM t ORDER BY id;
DELETE FROM va WHERE y = 51;
SELECT * FROM va ORDER BY x;
CREATE VIEW vw AS SELECT id, k FROM t WHERE k > 2;
UPDATE vw SET k = 100;
SELECT * FROM t ORDER BY id;
DELETE FROM vw;
SELECT * FROM t ORDER BY id;
INSERT INTO vw VALUES (6, 1);
SELECT * FROM t ORDER BY id;
CREATE VIEW vv AS SELECT x AS id2, y FROM va WHERE x < 6;
UPDATE vv SET y = 7 WHERE id2 = 2;
INSERT INTO vv VALUES (7, 7);
DELETE FROM vv WHERE y = 2;
SELECT * FROM t ORDER BY id;
CREATE VIEW vc AS SELECT id, k FROM t WHERE k < 10 WITH CHECK OPTION;
INSERT INTO vc VALUES (8, 8);
-- mysql8: MySQL 8 quotes the view as 'db.view', SQLSTATE HY000 (MariaDB: `db`.`view`, 44000)
-- expect: error 1369 (HY000): CHECK OPTION failed 'diff_viewwrite.vc'
-- expect: status: 
INSERT INTO vc VALUES (9, 90);
-- mysql8: MySQL 8 quotes the view as 'db.view', SQLSTATE HY000 (MariaDB: `db`.`view`, 44000)
-- expect: error 1369 (HY000): CHECK OPTION failed 'diff_viewwrite.vc'
-- expect: status: 
UPDATE vc SET k = 20 WHERE id = 8;
UPDATE vc SET k = 9 WHERE id = 8;
SELECT * FROM t ORDER BY id;
-- lockstep: go-mysql-server refuses WITH LOCAL CHECK OPTION when it plans CREATE VIEW (CASCADED and plain WITH CHECK OPTION are kept)
-- expect: error 1105 (HY000): unsupported syntax: WITH LOCAL CHECK OPTION
-- expect: status: 
CREATE VIEW vcl AS SELECT id, k FROM vc WHERE k > 1 WITH LOCAL CHECK OPTION;
CREATE VIEW vcn AS SELECT id, k FROM vc WHERE k > 1;
BEGIN;
-- mysql8: a view without CHECK OPTION still checks the views under it that have one (MySQL 8 manual, "The View WITH CHECK OPTION Clause"); MariaDB 10.11 does not
-- expect: error 1369 (HY000): CHECK OPTION failed 'diff_viewwrite.vcn'
-- expect: status: 
INSERT INTO vcn VALUES (10, 50);
ROLLBACK;
INSERT INTO vcn VALUES (10, 5);
INSERT INTO vcn VALUES (15, 0);
CREATE VIEW vcc AS SELECT id, k FROM vw WHERE k < 50 WITH CASCADED CHECK OPTION;
-- mysql8: MySQL 8 quotes the view as 'db.view', SQLSTATE HY000 (MariaDB: `db`.`view`, 44000)
-- expect: error 1369 (HY000): CHECK OPTION failed 'diff_viewwrite.vcc'
-- expect: status: 
INSERT INTO vcc VALUES (11, 1);
INSERT INTO vcc VALUES (11, 5);
SELECT * FROM t ORDER BY id;
CREATE VIEW vn AS SELECT id, k FROM vw WHERE k < 50;
INSERT INTO vn VALUES (12, 1);
SELECT * FROM t ORDER BY id;
CREATE VIEW vagg AS SELECT k, COUNT(*) AS n FROM t GROUP BY k;
UPDATE vagg SET k = 1;
DELETE FROM vagg;
INSERT INTO vagg VALUES (1, 1);
CREATE VIEW vd AS SELECT DISTINCT k FROM t;
UPDATE vd SET k = 1;
DELETE FROM vd;
CREATE TABLE u (id INT PRIMARY KEY, w INT);
CREATE VIEW vj AS SELECT t.id, u.w FROM t JOIN u ON t.id = u.id;
DELETE FROM vj;
INSERT INTO vj VALUES (1, 1);
CREATE VIEW ve AS SELECT id, k + 1 AS k1 FROM t;
INSERT INTO ve VALUES (13, 1);
UPDATE ve SET k1 = 3;
UPDATE ve SET id = 14 WHERE id = 12;
DELETE FROM ve WHERE k1 = 2;
SELECT * FROM t ORDER BY id;
LOCK TABLES vt WRITE;
INSERT INTO vt VALUES (20, 20);
UPDATE vt SET k = 21 WHERE id = 20;
SELECT * FROM vt WHERE id = 20;
DELETE FROM vt WHERE id = 20;
UNLOCK TABLES;
SELECT COUNT(*) FROM t;
