# RENAME TABLE and ALTER TABLE ... RENAME of TEMPORARY tables (issue 33):
# the session's temporary table is renamed, never the permanent table it
# hides; a permanent table may have the new name (the temporary one hides
# it); all pairs or none.
DROP DATABASE IF EXISTS diff_temprename_b;
CREATE DATABASE diff_temprename_b;
CREATE TABLE perm (id INT);
INSERT INTO perm VALUES (5);
CREATE TEMPORARY TABLE tmp (a INT);
INSERT INTO tmp VALUES (1);
CREATE TEMPORARY TABLE tmpb (a INT);
INSERT INTO tmpb VALUES (2);
RENAME TABLE tmp TO tmp2;
SELECT * FROM tmp2;
RENAME TABLE tmp2 TO tmpb;
SELECT * FROM tmp2;
RENAME TABLE tmp2 TO perm;
SELECT * FROM perm;
ALTER TABLE perm RENAME TO tmp3;
SELECT * FROM tmp3;
SELECT * FROM perm;
RENAME TABLE tmp3 TO diff_temprename_b.tmp4;
SELECT * FROM diff_temprename_b.tmp4;
ALTER TABLE diff_temprename_b.tmp4 RENAME TO tmp5;
SELECT * FROM tmp5;
RENAME TABLE tmp5 TO x, tmpb TO tmp5, x TO tmpb;
SELECT * FROM tmpb;
SELECT * FROM tmp5;
RENAME TABLE tmpb TO y, nosuch TO z;
SELECT * FROM tmpb;
INSERT INTO tmpb VALUES (3);
SELECT * FROM tmpb ORDER BY a;
SHOW TABLES;
DROP TABLE tmpb;
-- lockstep: a temporary table lives in an existing database: 1049 (MariaDB 10.11 renames it into a database that does not exist)
-- expect: error 1049 (42000): Unknown database 'diff_temprename_nodb'
-- expect: status: 
RENAME TABLE tmp5 TO diff_temprename_nodb.y;
SELECT * FROM perm;
DROP DATABASE diff_temprename_b;
