// ConnectorJ exercises MySQL Connector/J (JDBC) against a server the way an
// application does: metadata, every common column type, prepared
// statements (client- and server-side), batches, generated keys,
// transactions with rollback, locking reads, errors with MySQL's codes and
// states, streaming results and a stored procedure.
//
// Run by test/integration (TestOtherClients/connector-j) as a single-file
// program: java -cp mysql-connector-j.jar ConnectorJ.java PORT DATABASE
// It prints OK and exits 0, or prints what differed and exits 1.
import java.math.BigDecimal;
import java.math.BigInteger;
import java.sql.*;
import java.util.Arrays;

public class ConnectorJ {
    static void check(boolean ok, String what) {
        if (!ok) {
            throw new AssertionError(what);
        }
    }

    static void expectError(Connection c, String sql, int code, String state) throws SQLException {
        try (Statement st = c.createStatement()) {
            st.execute(sql);
        } catch (SQLException e) {
            check(e.getErrorCode() == code && state.equals(e.getSQLState()),
                    sql + ": error " + e.getErrorCode() + " (" + e.getSQLState() + ") " + e.getMessage()
                            + ", want " + code + " (" + state + ")");
            return;
        }
        throw new AssertionError(sql + ": no error, want " + code);
    }

    public static void main(String[] args) throws Exception {
        String port = args[0], db = args[1];
        for (boolean serverPrep : new boolean[] {false, true}) {
            String url = "jdbc:mysql://127.0.0.1:" + port + "/" + db + "?user=root&useSSL=false"
                    + "&allowPublicKeyRetrieval=true&rewriteBatchedStatements=true&useServerPrepStmts=" + serverPrep;
            try (Connection c = DriverManager.getConnection(url)) {
                run(c, "t_" + (serverPrep ? "server" : "client"));
            } catch (Throwable e) {
                System.out.println("useServerPrepStmts=" + serverPrep + ": " + e);
                e.printStackTrace(System.out);
                System.exit(1);
            }
        }
        System.out.println("OK");
    }

    static void run(Connection c, String t) throws Exception {
        DatabaseMetaData md = c.getMetaData();
        check(md.getDatabaseProductName().equals("MySQL"), "product name " + md.getDatabaseProductName());
        check(md.getDatabaseMajorVersion() == 8, "major version " + md.getDatabaseMajorVersion());

        try (Statement st = c.createStatement()) {
            st.execute("CREATE TABLE " + t + " (id BIGINT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(40) NOT NULL,"
                    + " price DECIMAL(10,2), at DATETIME(3), day DATE, data BLOB, flag TINYINT(1), big BIGINT UNSIGNED,"
                    + " doc JSON, ratio DOUBLE, UNIQUE KEY uq_name (name))");
        }
        try (ResultSet rs = md.getTables(c.getCatalog(), null, t, new String[] {"TABLE"})) {
            check(rs.next() && rs.getString("TABLE_NAME").equals(t), "getTables does not list " + t);
        }
        try (ResultSet rs = md.getColumns(c.getCatalog(), null, t, "price")) {
            check(rs.next() && rs.getInt("DATA_TYPE") == Types.DECIMAL && rs.getInt("DECIMAL_DIGITS") == 2,
                    "getColumns(price) is not DECIMAL(10,2)");
        }

        // A prepared INSERT with generated keys.
        Timestamp at = Timestamp.valueOf("2026-11-23 10:11:12.345");
        byte[] blob = new byte[] {0, 1, 2, (byte) 0xff, 'x'};
        BigInteger bigMax = new BigInteger("18446744073709551615");
        long firstId;
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t
                + " (name, price, at, day, data, flag, big, doc, ratio) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                Statement.RETURN_GENERATED_KEYS)) {
            ps.setString(1, "alice");
            ps.setBigDecimal(2, new BigDecimal("35.50"));
            ps.setTimestamp(3, at);
            ps.setDate(4, Date.valueOf("2026-11-23"));
            ps.setBytes(5, blob);
            ps.setBoolean(6, true);
            ps.setBigDecimal(7, new BigDecimal(bigMax)); // setObject(BigInteger) sends its long value, -1
            ps.setString(8, "{\"k\": [1, 2]}");
            ps.setDouble(9, 0.25);
            check(ps.executeUpdate() == 1, "insert count");
            try (ResultSet keys = ps.getGeneratedKeys()) {
                check(keys.next(), "no generated key");
                firstId = keys.getLong(1);
                check(firstId >= 1, "generated key " + firstId);
            }
        }
        try (PreparedStatement ps = c.prepareStatement("SELECT * FROM " + t + " WHERE id = ?")) {
            ps.setLong(1, firstId);
            try (ResultSet rs = ps.executeQuery()) {
                check(rs.next(), "row " + firstId + " not found");
                check(rs.getString("name").equals("alice"), "name " + rs.getString("name"));
                check(rs.getBigDecimal("price").equals(new BigDecimal("35.50")), "price " + rs.getBigDecimal("price"));
                check(rs.getTimestamp("at").equals(at), "at " + rs.getTimestamp("at"));
                check(rs.getDate("day").toString().equals("2026-11-23"), "day " + rs.getDate("day"));
                check(Arrays.equals(rs.getBytes("data"), blob), "blob " + Arrays.toString(rs.getBytes("data")));
                check(rs.getBoolean("flag"), "flag");
                check(rs.getBigDecimal("big").toBigInteger().equals(bigMax), "big " + rs.getBigDecimal("big"));
                check(rs.getString("doc").replace(" ", "").equals("{\"k\":[1,2]}"), "doc " + rs.getString("doc"));
                check(rs.getDouble("ratio") == 0.25, "ratio " + rs.getDouble("ratio"));
                ResultSetMetaData rm = rs.getMetaData();
                check(rm.getColumnType(3) == Types.DECIMAL && rm.getScale(3) == 2, "price metadata " + rm.getColumnTypeName(3));
                check(rm.getColumnTypeName(4).equals("DATETIME"), "at metadata " + rm.getColumnTypeName(4));
                check(rm.isAutoIncrement(1), "id is not reported AUTO_INCREMENT");
                check(rm.isNullable(2) == ResultSetMetaData.columnNoNulls, "name is reported nullable");
                check(!rs.next(), "more than one row");
            }
        }

        // A rewritten batch.
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " (name, price) VALUES (?, ?)")) {
            for (int i = 0; i < 100; i++) {
                ps.setString(1, "batch" + i);
                ps.setBigDecimal(2, BigDecimal.valueOf(i, 2));
                ps.addBatch();
            }
            int[] counts = ps.executeBatch();
            int sum = 0;
            for (int n : counts) {
                sum += n == Statement.SUCCESS_NO_INFO ? 1 : n;
            }
            check(sum == 100, "batch counts " + Arrays.toString(counts));
        }
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT COUNT(*), SUM(price) FROM " + t)) {
            check(rs.next() && rs.getInt(1) == 101, "count after batch " + rs.getInt(1));
            check(rs.getBigDecimal(2).equals(new BigDecimal("85.00")), "sum " + rs.getBigDecimal(2));
        }

        // Transactions: rollback leaves nothing, commit keeps.
        c.setAutoCommit(false);
        try (Statement st = c.createStatement()) {
            st.executeUpdate("INSERT INTO " + t + " (name) VALUES ('rolled back')");
            st.executeUpdate("UPDATE " + t + " SET price = 0 WHERE name = 'alice'");
        }
        c.rollback();
        try (Statement st = c.createStatement()) {
            try (ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + t + " WHERE name = 'rolled back'")) {
                check(rs.next() && rs.getInt(1) == 0, "ROLLBACK kept the insert");
            }
            try (ResultSet rs = st.executeQuery("SELECT price FROM " + t + " WHERE name = 'alice' FOR UPDATE")) {
                check(rs.next() && rs.getBigDecimal(1).equals(new BigDecimal("35.50")), "ROLLBACK kept the update");
            }
            st.executeUpdate("UPDATE " + t + " SET price = price + 1 WHERE name = 'alice'");
        }
        c.commit();
        c.setAutoCommit(true);
        try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT price FROM " + t + " WHERE name = 'alice'")) {
            check(rs.next() && rs.getBigDecimal(1).equals(new BigDecimal("36.50")), "COMMIT lost the update");
        }

        c.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
        check(c.getTransactionIsolation() == Connection.TRANSACTION_READ_COMMITTED, "isolation " + c.getTransactionIsolation());
        c.setTransactionIsolation(Connection.TRANSACTION_REPEATABLE_READ);

        // Errors carry MySQL's codes and states.
        try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + t + " (name) VALUES (?)")) {
            ps.setString(1, "alice");
            ps.executeUpdate();
            throw new AssertionError("duplicate name accepted");
        } catch (SQLIntegrityConstraintViolationException e) {
            check(e.getErrorCode() == 1062 && e.getSQLState().equals("23000"), "duplicate: " + e.getErrorCode() + " " + e.getSQLState());
        }
        expectError(c, "SELECT * FROM no_such_table", 1146, "42S02");
        expectError(c, "SELEC 1", 1064, "42000");
        expectError(c, "INSERT INTO " + t + " (name) VALUES (NULL)", 1048, "23000");

        // A streamed result (row by row).
        try (Statement st = c.createStatement(ResultSet.TYPE_FORWARD_ONLY, ResultSet.CONCUR_READ_ONLY)) {
            st.setFetchSize(Integer.MIN_VALUE);
            int n = 0;
            try (ResultSet rs = st.executeQuery("SELECT id FROM " + t + " ORDER BY id")) {
                while (rs.next()) {
                    n++;
                }
            }
            check(n == 101, "streamed " + n + " rows");
        }

        // A stored procedure with an OUT parameter.
        try (Statement st = c.createStatement()) {
            st.execute("CREATE PROCEDURE " + t + "_count(IN prefix VARCHAR(10), OUT n INT) "
                    + "SELECT COUNT(*) INTO n FROM " + t + " WHERE name LIKE CONCAT(prefix, '%')");
        }
        try (CallableStatement cs = c.prepareCall("{CALL " + t + "_count(?, ?)}")) {
            cs.setString(1, "batch");
            cs.registerOutParameter(2, Types.INTEGER);
            cs.execute();
            check(cs.getInt(2) == 100, "OUT parameter " + cs.getInt(2));
        }
    }
}
