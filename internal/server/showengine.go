package server

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// SHOW ENGINE engine {STATUS | MUTEX | LOGS}, which the parser does not
// know (1064). Monitoring tools (mysqld_exporter, pt-mysql-summary,
// mysqltuner, admin GUIs) send SHOW ENGINE INNODB STATUS. SHOW ENGINES
// names one engine, InnoDB, so that is the one engine these answer for
// (ALL means it too); any other is MySQL's 1286. Like MySQL they need the
// PROCESS privilege (1227).
//
//   - STATUS is one row (Type InnoDB, Name empty, Status a text) in the
//     InnoDB monitor's layout — banner, TRANSACTIONS, LOG, ROW OPERATIONS,
//     end marker — filled with lockstep's own counters, the ones SHOW
//     GLOBAL STATUS has (Lockstep_*, Innodb_*), under lines of InnoDB's
//     wording where the number means the same thing, and of lockstep's own
//     wording where it does not (there are no pages, no buffer pool, no
//     redo log LSN: those sections are left out rather than filled with
//     made-up numbers). The text says that it is lockstep's.
//   - MUTEX and LOGS: no rows (MySQL 8's InnoDB shows LOGS empty, and
//     MUTEX only for latches that waited; lockstep keeps no such
//     statistics).

var reShowEngine = regexp.MustCompile("(?is)^\\s*show\\s+engine\\s+(`[^`]+`|'[^']+'|\\w+)\\s+(status|mutex|logs)\\s*;?\\s*$")

// reComment is a /* comment */, or MySQL's executable comment /*!80000
// text */ or /*! text */ (pt-deadlock-logger sends SHOW /*!40100 ENGINE*/
// INNODB STATUS /* pt-deadlock-logger */).
var reComment = regexp.MustCompile(`(?s)/\*(!(\d{5})?)?(.*?)\*/`)

// uncommented returns q as MySQL reads it around its comments: an
// executable comment's text in its place (none for a version above
// lockstep's 8.0.33), a plain comment gone.
func uncommented(q string) string {
	if !strings.Contains(q, "/*") {
		return q
	}
	return reComment.ReplaceAllStringFunc(q, func(c string) string {
		m := reComment.FindStringSubmatch(c)
		if m[1] == "" {
			return " "
		}
		if v, err := strconv.Atoi(m[2]); err == nil && v > 80033 {
			return " "
		}
		return " " + m[3] + " "
	})
}

var engineFields = []*querypb.Field{
	{Name: "Type", Type: querypb.Type_VARCHAR, Charset: 255, ColumnLength: 40},
	{Name: "Name", Type: querypb.Type_VARCHAR, Charset: 255, ColumnLength: 2048},
	{Name: "Status", Type: querypb.Type_TEXT, Charset: 255, ColumnLength: 4294967295},
}

// showEngine answers SHOW ENGINE (m: reShowEngine's match).
func (h *handler) showEngine(c *mysql.Conn, m []string, cb mysql.ResultSpoolFn) error {
	engine := strings.Trim(m[1], "`'")
	if !strings.EqualFold(engine, "innodb") && !strings.EqualFold(engine, "all") {
		return mysql.NewSQLError(1286, "42000", "Unknown storage engine '%s'", engine)
	}
	if err := h.fe.RequireProcess(c.ConnectionID); err != nil {
		return err
	}
	res := &sqltypes.Result{Fields: engineFields}
	if strings.EqualFold(m[2], "status") {
		st := h.fe.StatusValues() // SHOW GLOBAL STATUS's lockstep counters, the server's included
		res.Rows = [][]sqltypes.Value{{sqltypes.NewVarChar("InnoDB"), sqltypes.NewVarChar(""),
			sqltypes.MakeTrusted(sqltypes.Text, []byte(engineStatus(st, time.Now())))}}
	}
	return cb(res, false)
}

// engineStatus is SHOW ENGINE INNODB STATUS's text from the global status
// counters st, at now.
func engineStatus(st map[string]int64, now time.Time) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	section := func(name string) {
		p("%s\n%s", strings.Repeat("-", len(name)), name)
		p("%s", strings.Repeat("-", len(name)))
	}
	p("")
	p("=====================================")
	p("%s 0x0 INNODB MONITOR OUTPUT", now.Format("2006-01-02 15:04:05"))
	p("=====================================")
	p("This server is lockstep, whose storage engine is its own, not InnoDB: below are its")
	p("counters (all of them in SHOW GLOBAL STATUS) under the InnoDB monitor's headings.")
	section("TRANSACTIONS")
	p("Trx id counter %d", st["Lockstep_trx_started"])
	p("Purge done: %d old row versions removed in %d runs", st["Lockstep_purged_versions"], st["Lockstep_purge_runs"])
	p("History list length %d", st["Innodb_history_list_length"])
	p("%d transactions active, %d long running; %d read-write transactions since start, %d rolled back",
		st["Lockstep_trx_active"], st["Lockstep_trx_long_running"], st["Lockstep_trx_read_write"], st["Lockstep_rollbacks"])
	p("Row locks: %d requests, %d granted at once, %d waits, %d waiting now, %d lock wait timeouts, %d deadlocks",
		st["Lockstep_lock_requests"], st["Lockstep_lock_immediate_grants"], st["Innodb_row_lock_waits"],
		st["Innodb_row_lock_current_waits"], st["Lockstep_lock_wait_timeouts"], st["Innodb_deadlocks"])
	section("LOG")
	p("Commits logged %d, in %d group appends; %d log bytes written since start",
		st["Lockstep_commits"], st["Lockstep_log_appends"], st["Lockstep_log_bytes"])
	p("Log first record kept %d, in %d segment files", st["Lockstep_log_first_index"], st["Lockstep_log_segments"])
	p("Last checkpoint at sequence number %d (%d checkpoints since start)", st["Lockstep_checkpoint_last_seq"], st["Lockstep_checkpoints"])
	p("%d log fsyncs, %d.%02d commits per fsync; group commit wake efficiency %d%%",
		st["Lockstep_log_fsyncs"], st["Lockstep_commits_per_fsync_x100"]/100, st["Lockstep_commits_per_fsync_x100"]%100,
		st["Lockstep_group_commit_wake_efficiency_pct"])
	section("ROW OPERATIONS")
	p("%d read views open inside InnoDB", st["Lockstep_read_views_open"])
	p("Number of rows inserted %d, updated %d, deleted %d, read %d",
		st["Innodb_rows_inserted"], st["Innodb_rows_updated"], st["Innodb_rows_deleted"], st["Innodb_rows_read"])
	p("----------------------------")
	p("END OF INNODB MONITOR OUTPUT")
	p("============================")
	return b.String()
}
