# Integer and decimal arithmetic at the edges.
CREATE TABLE t (id INT PRIMARY KEY, s BIGINT, u BIGINT UNSIGNED, d DECIMAL(20,4));
INSERT INTO t VALUES (1, 9223372036854775807, 18446744073709551615, 12.3456);
-- lockstep: 1690 quotes the expression as (t.s + 1); MySQL 8 writes (`diff_arith`.`t`.`s` + 1)
-- expect: error 1690 (22003): BIGINT value is out of range in '(t.s + 1)'
-- expect: status: 
SELECT s + 1 FROM t;
-- lockstep: 1690 quotes the expression as (t.u + 1); MySQL 8 writes (`diff_arith`.`t`.`u` + 1)
-- expect: error 1690 (22003): BIGINT UNSIGNED value is out of range in '(t.u + 1)'
-- expect: status: 
SELECT u + 1 FROM t;
SELECT u - 1, s - 1, u * 1 FROM t;
-- lockstep: 1690 quotes the expression without database and backquotes (MySQL 8: ((-`diff_arith`.`t`.`s`) - 2))
-- expect: error 1690 (22003): BIGINT value is out of range in '(-t.s - 2)'
-- expect: status: 
SELECT -s - 2 FROM t;
-- lockstep: 1690 quotes the expression as (0 - t.u); MySQL 8 writes (0 - `diff_arith`.`t`.`u`)
-- expect: error 1690 (22003): BIGINT UNSIGNED value is out of range in '(0 - t.u)'
-- expect: status: 
SELECT 0 - u FROM t;
-- lockstep: ROUND(d, 2) of a DECIMAL(20,4) column keeps the column's scale ('12.3500'); MySQL 8 and MariaDB give the result 2 decimals ('12.35')
-- expect: columns: d * d NEWDECIMAL, d / 7 NEWDECIMAL, ROUND(d, 2) NEWDECIMAL, TRUNCATE(d, 1) NEWDECIMAL, FLOOR(d) INTEGER, CEIL(d) INTEGER
-- expect: row: '152.41383936' | '1.76365714' | '12.3500' | '12.3' | '12' | '13'
-- expect: status: autocommit
SELECT d * d, d / 7, ROUND(d, 2), TRUNCATE(d, 1), FLOOR(d), CEIL(d) FROM t;
SELECT 1 + 1, 1 - 2, 2 * 3, 7 / 2, 1e3, 0.1 + 0.2;
-- lockstep: MOD and % of integers are DECIMAL; MySQL 8 and MariaDB: an integer type
-- expect: columns: ABS(-5) INTEGER, MOD(10, 4) NEWDECIMAL, POW(2, 10) DOUBLE, SQRT(16) DOUBLE, 5 DIV 0 INTEGER, 5 % 0 NEWDECIMAL
-- expect: row: '5' | '2' | '1024' | '4' | NULL | NULL
-- expect: status: autocommit
-- expect: warning: Warning 1365 Division by 0
-- expect: warning: Warning 1365 Division by 0
SELECT ABS(-5), MOD(10, 4), POW(2, 10), SQRT(16), 5 DIV 0, 5 % 0;
-- lockstep: 1690 quotes the expression as (t.s + 1); MySQL 8 writes (`diff_arith`.`t`.`s` + 1)
-- expect: error 1690 (22003): BIGINT value is out of range in '(t.s + 1)'
-- expect: status: 
UPDATE t SET s = s + 1;
UPDATE t SET s = s - 1 WHERE id = 1;
SELECT s FROM t;
SELECT TRUNCATE(12.3456, 2), TRUNCATE(-12.9, 0), TRUNCATE(1234, -2), TRUNCATE(1.999e0, 1), TRUNCATE(NULL, 1), TRUNCATE(5, NULL);
SELECT TRUNCATE(d, 2), TRUNCATE(s, -3), TRUNCATE(u, -19) FROM t;
# Bit inversion (~; mysqltuner's first query is SELECT ~0) and negation of
# unsigned integers (go-mysql-server wrapped -v in v's width: 56 for 200).
SELECT ~0, ~5, ~-1, ~2.6, ~'3', ~NULL, ~~5;
CREATE TABLE t2 (id INT PRIMARY KEY, tu TINYINT UNSIGNED, u BIGINT UNSIGNED, d DECIMAL(6,2));
INSERT INTO t2 VALUES (1, 200, 9223372036854775808, -2.5), (2, 0, 18446744073709551615, 3.49);
SELECT id, -tu, ~tu, ~d, ~id FROM t2 WHERE ~id > 0 ORDER BY id;
SELECT -u FROM t2 WHERE id = 1;
-- lockstep: 1690 quotes the expression as -t2.u; MySQL 8 writes -(`diff_arith`.`t2`.`u`)
-- expect: error 1690 (22003): BIGINT value is out of range in '-t2.u'
-- expect: status: 
SELECT -u FROM t2 WHERE id = 2;
