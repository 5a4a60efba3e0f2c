# Error codes, SQLSTATEs and messages users see first.
CREATE TABLE t (id INT PRIMARY KEY, email VARCHAR(20) NOT NULL, n INT, d DATETIME);
INSERT INTO t VALUES (1, 'a@x', 1, '2024-01-01 00:00:00');
-- mysql8: MySQL 8 names the key as table.key in 1062 (MariaDB: 'PRIMARY')
-- expect: error 1062 (23000): Duplicate entry '1' for key 't.PRIMARY'
-- expect: status: 
INSERT INTO t VALUES (1, 'b@x', 2, NULL);
INSERT INTO t VALUES (2, NULL, 2, NULL);
INSERT INTO t VALUES (3, 'this value is much too long for the column', 3, NULL);
-- mysql8: 1366 is SQLSTATE HY000 in MySQL 8 and names the bare column; MariaDB says 22007 and `db`.`t`.`n`
-- expect: error 1366 (HY000): Incorrect integer value: 'abc' for column 'n' at row 1
-- expect: status: 
INSERT INTO t VALUES (4, 'c@x', 'abc', NULL);
-- mysql8: MariaDB names the column as `db`.`t`.`d` in 1292; MySQL 8 the bare column
-- expect: error 1292 (22007): Incorrect datetime value: '2024-13-45' for column 'd' at row 1
-- expect: status: 
INSERT INTO t VALUES (5, 'd@x', 5, '2024-13-45');
SELECT * FROM missing;
SELECT * FROM mysql.missing;
SELECT * FROM information_schema.missing;
SELECT nosuchfunction(1);
SELECT mysql.nosuchfunction(1);
-- mysql8: MariaDB 10.11 names the statement in 1054 ('SELECT'); MySQL 8 the clause ('field list')
-- expect: error 1054 (42S22): Unknown column 'nosuch' in 'field list'
-- expect: status: 
SELECT nosuch FROM t;
USE nosuchdb;
CREATE TABLE t (x INT);
-- mysql8: MariaDB's 1064 text says 'MariaDB server version'
-- expect: error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near '' at line 1
-- expect: status: 
SELECT 1 FROM t WHERE;
DROP TABLE nosuch;
INSERT INTO t (id, email, n) VALUES (6, 'e@x', 99999999999);
-- mysql8: 1366 is SQLSTATE HY000 in MySQL 8 and names the bare column; MariaDB says 22007 and `db`.`t`.`email` (lockstep said 1105 "invalid string for charset")
-- expect: error 1366 (HY000): Incorrect string value: '\xFF\xFE' for column 'email' at row 1
-- expect: status: 
INSERT INTO t VALUES (7, X'FFFE', 7, NULL);
CREATE DATABASE diff_errors;
-- mysql8: as above; the value is shown from its first bad byte, six bytes at most
-- expect: error 1366 (HY000): Incorrect string value: '\xFFBCDEF...' for column 'email' at row 1
-- expect: status: 
INSERT INTO t VALUES (8, X'41FF424344454647', 8, NULL);
SELECT * FROM t ORDER BY id;
-- mysql8: MariaDB's 1064 text says 'MariaDB server version'
-- expect: error 1064 (42000): You have an error in your SQL syntax; check the manual that corresponds to your MySQL server version for the right syntax to use near 'FORM t' at line 1
-- expect: status: 
SELECT * FORM t;
-- mysql8: MariaDB 10.11 names the statement in 1054; MySQL 8 the clause ('where clause')
-- expect: error 1054 (42S22): Unknown column 'zz' in 'where clause'
-- expect: status: 
SELECT id FROM t WHERE zz = 1;
-- mysql8: MariaDB 10.11 names the statement in 1054; MySQL 8 the clause ('field list')
-- expect: error 1054 (42S22): Unknown column 't.zz' in 'field list'
-- expect: status: 
SELECT t.zz FROM t;
-- mysql8: MariaDB 10.11 names the statement in 1054; MySQL 8 the clause ('order clause')
-- expect: error 1054 (42S22): Unknown column 'zz' in 'order clause'
-- expect: status: 
SELECT id FROM t ORDER BY zz;
-- mysql8: MariaDB 10.11 names the statement in 1054; MySQL 8 the clause ('field list')
-- expect: error 1054 (42S22): Unknown column 'zz' in 'field list'
-- expect: status: 
UPDATE t SET zz = 1;
CREATE TABLE e (id INT PRIMARY KEY, en ENUM('a', 'b'), s SET('x', 'y'));
INSERT INTO e VALUES (1, 'q', 'x');
INSERT INTO e VALUES (1, 'a', 'q');
SELECT * FROM missing_table;
SHOW WARNINGS;
SHOW ERRORS;
DROP TABLE missing_two;
SHOW ERRORS;
SHOW ERRORS LIMIT 0;
# A column two tables have, named without its table: 1052 with the clause.
CREATE TABLE amb1 (id INT, k INT);
CREATE TABLE amb2 (id INT, k INT);
-- mysql8: MySQL 8 names the clause as 'field list'; MariaDB 10.11 says 'SELECT'
-- expect: error 1052 (23000): Column 'id' in field list is ambiguous
-- expect: status: 
SELECT id FROM amb1, amb2;
-- mysql8: MySQL 8 says 'where clause'; MariaDB 10.11 'WHERE'
-- expect: error 1052 (23000): Column 'k' in where clause is ambiguous
-- expect: status: 
SELECT amb1.id FROM amb1 JOIN amb2 ON amb1.id = amb2.id WHERE k = 1;
-- mysql8: MySQL 8 says 'order clause'; MariaDB 10.11 'ORDER BY'
-- expect: error 1052 (23000): Column 'k' in order clause is ambiguous
-- expect: status: 
SELECT amb1.id FROM amb1 JOIN amb2 ON amb1.id = amb2.id ORDER BY k;
-- mysql8: MySQL 8 says 'on clause'; MariaDB 10.11 'ON'
-- expect: error 1052 (23000): Column 'id' in on clause is ambiguous
-- expect: status: 
SELECT amb1.id, amb2.k FROM amb1 JOIN amb2 ON id = amb2.id;
-- lockstep: go-mysql-server checks ONLY_FULL_GROUP_BY before it finds the GROUP BY column ambiguous (MySQL 8 and MariaDB: 1052)
-- expect: error 1055 (42000): Expression #1 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'diff_errors.amb1.id' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by
-- expect: status: 
SELECT amb1.id FROM amb1 JOIN amb2 ON amb1.id = amb2.id GROUP BY k;
