package server

import (
	"errors"
	"strings"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/sirupsen/logrus"
)

// Client errors are not server errors. A statement that fails because of
// what the client sent (bad SQL, USE of a database that does not exist, a
// missing table, a duplicate key) is the client's business: the client
// hears of it, and the server's log says it at debug level, once, with
// the connection id (logStatementError). go-mysql-server and vitess logged
// some of these at error level, several times (USE nosuchdb: "unable to
// process ComInitDB" and "ComInitDB failed", both level=error), which an
// operator reads as a server fault. Error level is kept for what an
// operator must act on: a statement that failed because the log failed or
// the disk is full (1180, 1021), a panic the protocol layer caught, the
// libraries' own failures.
//
// The libraries' lines are re-levelled by their text (clientLines), in the
// formatter of logrus's standard logger, which both write through
// (protolog.go); a line whose new level the logger does not enable is not
// written.

// clientLines are the texts, by prefix, of go-mysql-server's and vitess's
// log lines about what a client did, and the level each is written at.
// Trace: a statement's error, which logStatementError writes once with
// the connection id (these repeat it, some without the id). Info: what
// only the protocol layer sees — a client that closed its connection
// mid-command, sent a malformed or unexpected packet, failed its
// handshake; vitess names the connection in most.
var clientLines = []struct {
	prefix string
	level  logrus.Level
}{
	// go-mysql-server (server/handler.go)
	{"error running query", logrus.TraceLevel},
	{"unable to process ComInitDB", logrus.TraceLevel},
	{"unable to prepare query", logrus.TraceLevel}, // and vitess's line of the same text
	// vitess (go/mysql/conn.go, server.go): statements
	{"ComInitDB failed ", logrus.TraceLevel},
	{"failed to set the database ", logrus.TraceLevel},
	{"Error while parsing prepared statement", logrus.InfoLevel},
	{"error splitting query", logrus.InfoLevel},
	// vitess: the connection went away, or sent what it should not
	{"Error reading packet from ", logrus.InfoLevel},
	{"Error writing ", logrus.InfoLevel},
	{"Error in the middle of a stream to ", logrus.InfoLevel},
	{"Error writeEndResult error", logrus.InfoLevel},
	{"Cannot write OK packet to ", logrus.InfoLevel},
	{"Conn ", logrus.InfoLevel}, // "Conn N: Flush() failed", "Conn N: Error writing query error"
	{"conn ", logrus.InfoLevel}, // "conn N: flush() failed", "conn N: parseCom... failed"
	{"Got unhandled packet", logrus.InfoLevel},
	{"Got unhandled ComStmtReset packet", logrus.InfoLevel},
	{"Received ComStmtPrepare with outstanding cursor", logrus.InfoLevel},
	{"Received ComStmtExecute with outstanding cursor", logrus.InfoLevel},
	{"Commands were executed in an improper order", logrus.InfoLevel},
	{"Unable to parse COM_STMT_FETCH", logrus.InfoLevel},
	{"Requested stmtID does not match", logrus.InfoLevel},
	// vitess: the handshake
	{"Cannot send HandshakeV10 packet", logrus.InfoLevel},
	{"Cannot read client handshake response", logrus.InfoLevel},
	{"Cannot parse client handshake response", logrus.InfoLevel},
	{"Cannot read post-SSL client handshake response", logrus.InfoLevel},
	{"Cannot parse post-SSL client handshake response", logrus.InfoLevel},
	{"Error reading auth switch response", logrus.InfoLevel},
	{"Unable to copy client auth response", logrus.InfoLevel},
	{"Error authenticating user", logrus.InfoLevel},
	{"No authentication methods available", logrus.InfoLevel},
	{"Cannot use clear text authentication", logrus.InfoLevel},
}

// clientLineLevel is the level a library's line is written at: lower for
// the lines about clients, as it came otherwise. A line at error level or
// above that names a caught panic keeps its level.
func clientLineLevel(msg string, level logrus.Level) logrus.Level {
	if strings.HasPrefix(msg, panicPrefix) {
		return level
	}
	for _, l := range clientLines {
		if strings.HasPrefix(msg, l.prefix) {
			return max(level, l.level) // logrus: a larger level is less severe
		}
	}
	return level
}

// levelFormatter is logrus's formatter with clientLineLevel applied.
type levelFormatter struct{ inner logrus.Formatter }

func (f levelFormatter) Format(e *logrus.Entry) ([]byte, error) {
	if lvl := clientLineLevel(e.Message, e.Level); lvl != e.Level {
		if e.Logger != nil && !e.Logger.IsLevelEnabled(lvl) {
			return nil, nil // not written (limitedLog skips empty writes)
		}
		e.Level = lvl
	}
	return f.inner.Format(e)
}

func init() {
	logrus.SetFormatter(levelFormatter{inner: logrus.StandardLogger().Formatter})
}

// serverProblems are the errors a statement can fail with that an
// operator must act on: the log could not be written (1180: the server
// takes no more writes until restarted) or the disk is full (1021).
var serverProblems = map[int]bool{
	mysql.ERDiskFull: true,
	1180:             true, // ER_ERROR_DURING_COMMIT (durable.go, commitError)
}

// logStatementError logs the error a statement of connection c failed
// with (err as the client gets it), once: at error level if it is a
// server problem, at debug level otherwise.
func logStatementError(connID uint32, err error) {
	if err == nil {
		return
	}
	var se *mysql.SQLError
	if !errors.As(err, &se) {
		se = mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "%v", err)
	}
	level := logrus.DebugLevel
	if serverProblems[se.Num] {
		level = logrus.ErrorLevel
	}
	if !logrus.IsLevelEnabled(level) {
		return
	}
	logrus.WithField("connectionID", connID).WithField("errno", se.Num).
		Logf(level, "statement failed: %s", se.Message)
}
