package server

import (
	"context"
	gosql "database/sql"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestShowEngine: SHOW ENGINE INNODB STATUS (1064 before) is one row in
// the InnoDB monitor's layout carrying the server's counters; MUTEX and
// LOGS are empty; another engine is 1286; an account without PROCESS
// gets 1227, one with it the status. InnoDB's log counters are the log's.
func TestShowEngine(t *testing.T) {
	s := startInProcess(t, nil)
	s.exec(t, "CREATE DATABASE e")
	s.exec(t, "CREATE TABLE e.t (id INT PRIMARY KEY)")
	s.exec(t, "INSERT INTO e.t VALUES (1), (2), (3)")
	s.exec(t, "INSERT INTO e.t VALUES (4)")

	var typ, name, text string
	if err := s.db.QueryRow("SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &text); err != nil {
		t.Fatal(err)
	}
	commits := s.status(t, "GLOBAL", "Lockstep_commits")
	if typ != "InnoDB" || name != "" {
		t.Errorf("Type, Name = %q, %q; want InnoDB and empty", typ, name)
	}
	for _, want := range []string{
		"INNODB MONITOR OUTPUT", "\nTRANSACTIONS\n", "\nLOG\n", "\nROW OPERATIONS\n", "END OF INNODB MONITOR OUTPUT",
		"Commits logged " + strconv.FormatInt(commits, 10) + ",", // no commit in between: the same count
		"Number of rows inserted 4,",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("status lacks %q:\n%s", want, text)
		}
	}

	// InnoDB's names for the log's counters (mysqltuner divided by a zero
	// Innodb_log_writes).
	for inno, own := range map[string]string{
		"Innodb_log_writes": "Lockstep_log_writes", "Innodb_log_write_requests": "Lockstep_log_appends",
		"Innodb_os_log_fsyncs": "Lockstep_log_fsyncs", "Innodb_os_log_written": "Lockstep_log_bytes",
	} {
		if a, b := s.status(t, "GLOBAL", inno), s.status(t, "GLOBAL", own); a != b || a == 0 {
			t.Errorf("%s = %d, %s = %d: want equal and above 0", inno, a, own, b)
		}
	}

	// pt-deadlock-logger's spelling: an executable comment, a comment after.
	if err := s.db.QueryRow("SHOW /*!40100 ENGINE*/ INNODB STATUS /* pt-deadlock-logger */").Scan(&typ, &name, &text); err != nil || typ != "InnoDB" {
		t.Errorf("SHOW /*!40100 ENGINE*/ INNODB STATUS: %v, Type %q", err, typ)
	}

	for _, q := range []string{"SHOW ENGINE InnoDB MUTEX", "show engine `innodb` logs", "SHOW ENGINE ALL MUTEX"} {
		rows, err := s.db.Query(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		cols, _ := rows.Columns()
		n := 0
		for rows.Next() {
			n++
		}
		rows.Close()
		if strings.Join(cols, ",") != "Type,Name,Status" || n != 0 {
			t.Errorf("%s: columns %v, %d rows; want Type,Name,Status and none", q, cols, n)
		}
	}
	wantErr := func(db *gosql.DB, q string, num uint16) {
		t.Helper()
		var a, b, c string
		err := db.QueryRowContext(context.Background(), q).Scan(&a, &b, &c)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != num {
			t.Errorf("%s: %v, want error %d", q, err, num)
		}
	}
	wantErr(s.db, "SHOW ENGINE MyISAM STATUS", 1286)

	s.exec(t, "CREATE USER 'mon'@'%' IDENTIFIED BY 'pw'")
	mon, err := gosql.Open("mysql", "mon:pw@tcp("+s.addr+")/")
	if err != nil {
		t.Fatal(err)
	}
	defer mon.Close()
	wantErr(mon, "SHOW ENGINE INNODB STATUS", 1227)
	s.exec(t, "GRANT PROCESS ON *.* TO 'mon'@'%'")
	if err := mon.QueryRow("SHOW ENGINE INNODB STATUS").Scan(&typ, &name, &text); err != nil || !strings.Contains(text, "TRANSACTIONS") {
		t.Errorf("with PROCESS: %v", err)
	}
}
