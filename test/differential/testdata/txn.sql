# Status flags through transactions: AUTOCOMMIT and IN_TRANS as MySQL sets
# them in every OK and EOF packet (PyMySQL's ROLLBACK depended on them).
CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(10));
INSERT INTO t VALUES (1, 'a');
BEGIN;
SELECT * FROM t;
UPDATE t SET v = 'b' WHERE id = 1;
ROLLBACK;
SELECT * FROM t;
START TRANSACTION;
INSERT INTO t VALUES (2, 'b');
COMMIT;
SET autocommit = 0;
SELECT COUNT(*) FROM t;
INSERT INTO t VALUES (3, 'c');
ROLLBACK;
SELECT COUNT(*) FROM t;
SET autocommit = 1;
SELECT @@autocommit;
BEGIN;
SAVEPOINT s1;
INSERT INTO t VALUES (4, 'd');
ROLLBACK TO SAVEPOINT s1;
RELEASE SAVEPOINT s1;
COMMIT;
SELECT id FROM t ORDER BY id;
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
BEGIN;
COMMIT;
BEGIN;
SET TRANSACTION ISOLATION LEVEL SERIALIZABLE;
COMMIT;
-- lockstep: MySQL 8 and MariaDB send the info "Statement prepared"; lockstep drops it, because go-mysql-server's protocol layer would send it behind a length byte of 35 and clients read past the packet (internal/server/handler.go vitessInfoLen)
-- expect: ok affected=0 insert_id=0
-- expect: status: autocommit
PREPARE s FROM 'SELECT id FROM t WHERE id = ?';
SET @k = 1;
EXECUTE s USING @k;
DEALLOCATE PREPARE s;
