# String functions and comparisons under the default collation.
CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), UNIQUE KEY (name));
INSERT INTO t VALUES (1, 'alice'), (2, 'Bob'), (3, 'carol');
SELECT id FROM t WHERE name = 'ALICE';
-- mysql8: MySQL 8 names the key as table.key in 1062 (MariaDB: 'name')
-- expect: error 1062 (23000): Duplicate entry 'Alice' for key 't.name'
-- expect: status: 
INSERT INTO t VALUES (4, 'Alice');
SELECT name FROM t ORDER BY name;
SELECT UPPER(name), LOWER(name), LENGTH(name), CHAR_LENGTH(name), REVERSE(name) FROM t ORDER BY id;
SELECT CONCAT('a', NULL), CONCAT_WS(',', 'a', NULL, 'b'), SUBSTRING('hello', 2, 3), LEFT('hello', 2), RIGHT('hello', 2);
SELECT TRIM('  x  '), LTRIM('  x'), RTRIM('x  '), LPAD('5', 3, '0'), RPAD('5', 3, '*'), REPEAT('ab', 3);
SELECT REPLACE('aaa', 'a', 'b'), INSTR('hello', 'l'), LOCATE('l', 'hello', 4), POSITION('l' IN 'hello');
SELECT 'abc' LIKE 'A%', 'abc' LIKE '_b_', 'a_c' LIKE 'a\_c', 'abc' REGEXP '^a';
SELECT name FROM t WHERE name LIKE 'c%' ORDER BY id;
SELECT STRCMP('a', 'b'), STRCMP('b', 'a'), STRCMP('a', 'A');
SELECT FIELD('b', 'a', 'b'), ELT(2, 'x', 'y'), FIND_IN_SET('b', 'a,b,c'), HEX('ab'), UNHEX('6162');
-- mysql8: utf8mb4_0900_ai_ci is NO PAD, so 'a' = 'a ' is 0 in MySQL 8; MariaDB's collations pad
-- expect: columns: 'a' = 'a ' INTEGER, 'a' < 'b' INTEGER, 'B' > 'a' INTEGER
-- expect: row: '0' | '1' | '1'
-- expect: status: autocommit
SELECT 'a' = 'a ', 'a' < 'b', 'B' > 'a';
SELECT COALESCE(NULL, 1), IFNULL(NULL, 'x'), NULLIF(1, 1), IF(1 > 0, 'y', 'n');
SELECT CASE WHEN 1 = 1 THEN 'one' ELSE 'other' END, CASE 2 WHEN 1 THEN 'a' WHEN 2 THEN 'b' END;
