# Aggregates: types, NULLs, DISTINCT, GROUP BY, HAVING, ORDER BY ... LIMIT.
CREATE TABLE t (id INT PRIMARY KEY, g INT, n INT, d DECIMAL(10,2), s VARCHAR(10));
INSERT INTO t VALUES (1, 1, 10, 1.50, 'a'), (2, 1, NULL, 2.25, 'b'), (3, 2, 30, NULL, 'c'), (4, 2, 30, 4.00, NULL), (5, 3, 50, 5.75, 'e');
SELECT COUNT(*), COUNT(n), COUNT(DISTINCT n), SUM(n), AVG(n), MIN(n), MAX(n) FROM t;
SELECT SUM(d), AVG(d), MIN(d), MAX(d) FROM t;
SELECT g, COUNT(*), SUM(n), AVG(d) FROM t GROUP BY g ORDER BY g;
SELECT g, SUM(n) AS total FROM t GROUP BY g HAVING total > 20 ORDER BY g;
SELECT SUM(DISTINCT n), AVG(DISTINCT n) FROM t;
SELECT COUNT(*), SUM(n), AVG(n), MAX(s) FROM t WHERE id > 100;
SELECT id, n FROM t ORDER BY n DESC, id LIMIT 2;
SELECT id FROM t ORDER BY id LIMIT 0;
SELECT id FROM t ORDER BY id LIMIT 2 OFFSET 3;
SELECT GROUP_CONCAT(s ORDER BY id) FROM t;
SELECT g, GROUP_CONCAT(id ORDER BY id SEPARATOR '-') FROM t GROUP BY g ORDER BY g;
SELECT id, n FROM t ORDER BY n, id;
SELECT id, n FROM t ORDER BY n DESC, id;
-- mysql8: MariaDB's 1055 text is short; MySQL 8 names the SELECT list item and the sql_mode
-- expect: error 1055 (42000): Expression #2 of SELECT list is not in GROUP BY clause and contains nonaggregated column 'diff_agg.t.n' which is not functionally dependent on columns in GROUP BY clause; this is incompatible with sql_mode=only_full_group_by
-- expect: status: 
SELECT g, n FROM t GROUP BY g;
