# Writes through updatable views inside triggers and stored procedures
# (internal/sqlfront/viewroutine.go): the same rewrite as at the top level
# (viewwrite.sql), CHECK OPTION failures (1369) and MySQL's errors for views
# that cannot be written (1288, 1471, 1348) raised when the statement runs,
# a view write in a procedure called from a trigger, in a loop, and the
# CHECK OPTION of one statement not applied to another's write.
CREATE TABLE log (id INT);
CREATE VIEW vl AS SELECT id FROM log;
CREATE TABLE c (id INT PRIMARY KEY);
CREATE TRIGGER trg AFTER INSERT ON c FOR EACH ROW INSERT INTO vl VALUES (NEW.id);
INSERT INTO c VALUES (1);
INSERT INTO c VALUES (2);
SELECT * FROM log ORDER BY id;
CREATE TABLE t (id INT PRIMARY KEY, k INT);
CREATE VIEW vc AS SELECT id, k FROM t WHERE k < 10 WITH CHECK OPTION;
CREATE VIEW va AS SELECT id AS x, k AS y FROM t;
CREATE VIEW vg AS SELECT k, COUNT(*) AS n FROM t GROUP BY k;
CREATE VIEW ve AS SELECT id, k + 1 AS k1 FROM t;
CREATE TABLE c2 (id INT PRIMARY KEY, k INT);
CREATE TRIGGER tc AFTER INSERT ON c2 FOR EACH ROW BEGIN IF NEW.k < 0 THEN INSERT INTO vg VALUES (1, 1); END IF; INSERT INTO vc VALUES (NEW.id, NEW.k); END;
INSERT INTO c2 VALUES (1, 5);
-- mysql8: MySQL 8 quotes the view as 'db.view', SQLSTATE HY000 (MariaDB: `db`.`view`, 44000)
-- expect: error 1369 (HY000): CHECK OPTION failed 'diff_viewroutine.vc'
-- expect: status:
INSERT INTO c2 VALUES (2, 50);
INSERT INTO c2 VALUES (3, -1);
SELECT * FROM c2 ORDER BY id;
SELECT * FROM t ORDER BY id;
CREATE TABLE u (id INT PRIMARY KEY, k INT);
CREATE TRIGGER tu BEFORE UPDATE ON u FOR EACH ROW UPDATE va SET y = NEW.k WHERE x = NEW.id;
CREATE TRIGGER td BEFORE DELETE ON u FOR EACH ROW DELETE FROM va WHERE x = OLD.id;
INSERT INTO u VALUES (1, 1);
UPDATE u SET k = 7 WHERE id = 1;
SELECT * FROM t ORDER BY id;
DELETE FROM u WHERE id = 1;
SELECT * FROM t ORDER BY id;
CREATE PROCEDURE pw(a INT, b INT) BEGIN INSERT INTO vc VALUES (a, b); UPDATE vc SET k = k + 1 WHERE id = a; END;
-- lockstep: CALL's OK packet is go-mysql-server's, the last statement's count and info (MariaDB sums the rows of all; not about views: the rows are compared below)
-- expect: ok affected=1 insert_id=0
-- expect: info: Rows matched: 1  Changed: 1  Warnings: 0
-- expect: status: autocommit
CALL pw(10, 3);
-- mysql8: MySQL 8 quotes the view as 'db.view', SQLSTATE HY000 (MariaDB: `db`.`view`, 44000)
-- expect: error 1369 (HY000): CHECK OPTION failed 'diff_viewroutine.vc'
-- expect: status:
CALL pw(11, 30);
-- mysql8: MySQL 8 quotes the view as 'db.view', SQLSTATE HY000 (MariaDB: `db`.`view`, 44000)
-- expect: error 1369 (HY000): CHECK OPTION failed 'diff_viewroutine.vc'
-- expect: status:
CALL pw(12, 9);
SELECT * FROM t ORDER BY id;
CREATE PROCEDURE pe() UPDATE ve SET k1 = 3;
CALL pe();
CREATE PROCEDURE pg() DELETE FROM vg;
CALL pg();
CREATE PROCEDURE pi() INSERT INTO vg VALUES (1, 1);
CALL pi();
CREATE PROCEDURE pl(n INT) BEGIN DECLARE i INT DEFAULT 0; WHILE i < n DO INSERT INTO va (x, y) VALUES (100 + i, i); SET i = i + 1; END WHILE; END;
-- lockstep: CALL's OK packet is go-mysql-server's, the last statement's count and info (MariaDB sums the rows of all; not about views: the rows are compared below)
-- expect: ok affected=1 insert_id=0
-- expect: status: autocommit
CALL pl(3);
CALL pl(0);
SELECT * FROM t ORDER BY id;
CREATE PROCEDURE pm() BEGIN INSERT INTO vc VALUES (20, 1); INSERT INTO t VALUES (21, 50); UPDATE t SET k = 60 WHERE id = 20; END;
-- lockstep: CALL's OK packet is go-mysql-server's, the last statement's count and info (MariaDB sums the rows of all; not about views: the rows are compared below)
-- expect: ok affected=1 insert_id=0
-- expect: info: Rows matched: 1  Changed: 1  Warnings: 0
-- expect: status: autocommit
CALL pm();
SELECT * FROM t WHERE id >= 20 ORDER BY id;
CREATE TABLE d (id INT PRIMARY KEY);
CREATE TRIGGER tdp AFTER INSERT ON d FOR EACH ROW CALL pw(NEW.id, 1);
INSERT INTO d VALUES (200);
SELECT * FROM t WHERE id >= 200 ORDER BY id;
CREATE TABLE x (id INT PRIMARY KEY);
CREATE TABLE y (id INT PRIMARY KEY);
CREATE TRIGGER tx AFTER INSERT ON x FOR EACH ROW INSERT INTO vc VALUES (NEW.id, 1);
CREATE TRIGGER ty AFTER INSERT ON y FOR EACH ROW INSERT INTO t VALUES (NEW.id, 99);
INSERT INTO y VALUES (300);
INSERT INTO x VALUES (301);
SELECT * FROM t WHERE id >= 300 ORDER BY id;
SELECT COUNT(*) FROM log;
