# Constants carried through equalities (sqlfront/constprop.go): the
# derived conjuncts must never change a result. Joins inner, comma, outer;
# chains; contradicting constants; ON equalities; signed against unsigned;
# columns of other types (not carried); NULLs.
CREATE TABLE w (w_id SMALLINT PRIMARY KEY, ytd INT);
CREATE TABLE d (d_w_id SMALLINT, d_id TINYINT, ytd INT, PRIMARY KEY (d_w_id, d_id));
CREATE TABLE o (o_w_id INT UNSIGNED, o_d_id TINYINT, o_id INT, c VARCHAR(5), PRIMARY KEY (o_w_id, o_d_id, o_id));
CREATE TABLE s (k VARCHAR(5), n INT, KEY (k));
INSERT INTO w VALUES (1, 100), (2, 200), (3, NULL);
INSERT INTO d VALUES (1, 1, 10), (1, 2, 20), (2, 1, 30), (2, 2, 40), (3, 1, 50);
INSERT INTO o VALUES (1, 1, 1, 'a'), (1, 1, 2, 'b'), (1, 2, 1, 'c'), (2, 1, 1, 'd'), (3, 1, 1, '1');
INSERT INTO s VALUES ('1', 1), ('01', 1), ('1.0', 1), ('2', 2), (NULL, NULL);
SELECT d_w_id, SUM(d.ytd) - MAX(w.ytd) FROM d, w WHERE d_w_id = w_id AND w_id = 1 GROUP BY d_w_id;
SELECT d_w_id, d_id FROM d JOIN w ON d_w_id = w_id WHERE w_id = 2 ORDER BY d_id;
SELECT d_w_id, d_id FROM d JOIN w ON d_w_id = w_id WHERE 2 = w_id ORDER BY d_id;
SELECT COUNT(*) FROM d, w, o WHERE o_w_id = d_w_id AND d_w_id = w_id AND w_id = 1 AND o_d_id = d_id;
SELECT COUNT(*) FROM d, w WHERE d_w_id = w_id AND w_id = 1 AND d_w_id = 2;
SELECT w_id, d_id FROM w LEFT JOIN d ON d_w_id = w_id AND d_id = 2 WHERE w_id = 3;
SELECT w_id, d_id FROM w LEFT JOIN d ON d_w_id = w_id WHERE d_w_id = 1 ORDER BY d_id;
SELECT w_id, d_id FROM w LEFT JOIN d ON d_w_id = w_id WHERE w_id = 1 ORDER BY d_id;
SELECT COUNT(*) FROM w, d WHERE d_w_id = w_id AND w_id = -1;
SELECT COUNT(*) FROM o, d WHERE o_w_id = d_w_id AND d_w_id = 1 AND o_d_id = d_id AND d_id = 1;
SELECT o_id, n FROM o, s WHERE c = k AND k = 1 ORDER BY o_id;
SELECT o_id, n FROM o, s WHERE o_w_id = n AND n = 1 ORDER BY o_id;
SELECT COUNT(*) FROM d, w WHERE d_w_id = w_id AND w_id = NULL;
SELECT COUNT(*) FROM d, w WHERE d_w_id = w_id AND w_id = 1 OR d_w_id = 3;
SELECT (SELECT COUNT(*) FROM d, w WHERE d_w_id = w_id AND w_id = o.o_w_id) FROM o ORDER BY o_w_id, o_d_id, o_id;
SELECT COUNT(*) FROM d AS a, d AS b WHERE a.d_w_id = b.d_w_id AND b.d_w_id = 1 AND a.d_id = 2;
