# System variables set in a list: a scope word (GLOBAL, SESSION) applies to
# the bare names after it until the next one; an @@global. or @@session.
# prefix applies to its own variable only. The globals are put back at the end.
# (Types not compared: MariaDB types these variables INTEGER unsigned, lockstep
# INTEGER, as go-mysql-server declares them.)
SET GLOBAL wait_timeout = 1001, interactive_timeout = 1002;
-- ignore: types
SELECT @@global.wait_timeout, @@global.interactive_timeout, @@session.wait_timeout = 1001, @@session.interactive_timeout = 1002;
SET SESSION wait_timeout = 2001, GLOBAL interactive_timeout = 2002, net_read_timeout = 2003;
-- ignore: types
SELECT @@session.wait_timeout, @@global.interactive_timeout, @@global.net_read_timeout, @@session.net_read_timeout = 2003;
SET GLOBAL wait_timeout = 3001, @@session.interactive_timeout = 3002, net_read_timeout = 3003;
-- ignore: types
SELECT @@global.wait_timeout, @@session.interactive_timeout, @@global.net_read_timeout, @@session.net_read_timeout = 3003;
SET @@global.wait_timeout = 4001, interactive_timeout = 4002;
-- ignore: types
SELECT @@global.wait_timeout, @@session.interactive_timeout, @@global.interactive_timeout = 4002;
SET GLOBAL wait_timeout = 5001, @x = 'a, b', interactive_timeout = 5002;
-- ignore: types
SELECT @@global.wait_timeout, @x, @@global.interactive_timeout;
SET GLOBAL wait_timeout = 28800, interactive_timeout = 28800, net_read_timeout = 30;
-- ignore: types
SELECT @@global.wait_timeout, @@global.interactive_timeout, @@global.net_read_timeout;
