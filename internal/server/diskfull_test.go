package server

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/config"
	"lockstep/internal/txlog"
)

// fullFS is the operating system's files, except that while full is set
// every write lands only its first few bytes and fails with ENOSPC.
type fullFS struct {
	txlog.OSFS
	full     atomic.Bool
	syncFail atomic.Bool // every fsync fails with EIO
}

func (fs *fullFS) OpenFile(name string, flag int, perm os.FileMode) (txlog.File, error) {
	f, err := fs.OSFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: f, fs: fs}, nil
}

type fullFile struct {
	txlog.File
	fs *fullFS
}

func (f *fullFile) WriteAt(b []byte, off int64) (int, error) {
	if !f.fs.full.Load() {
		return f.File.WriteAt(b, off)
	}
	n, _ := f.File.WriteAt(b[:min(len(b), 40)], off) // a torn piece lands
	return n, &os.PathError{Op: "write", Path: "segment", Err: syscall.ENOSPC}
}

func (f *fullFile) Sync() error {
	if f.fs.syncFail.Load() {
		return &os.PathError{Op: "fsync", Path: "segment", Err: syscall.EIO}
	}
	return f.File.Sync()
}

// TestDiskFullCommit: a commit whose log write finds the disk full fails
// with ER_DISK_FULL (1021) and is rolled back, nothing acknowledged is
// lost, and commits succeed again once there is space, also after a
// restart.
func TestDiskFullCommit(t *testing.T) {
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	fs := &fullFS{}
	s := openLocal(t, cfg, fs)
	s.exec("CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)", "INSERT INTO d.t VALUES (1)")

	fs.full.Store(true)
	wantDiskFull := func(q string) {
		t.Helper()
		_, err := s.query(q)
		var se *mysql.SQLError
		if !errors.As(err, &se) || se.Num != 1021 {
			t.Fatalf("%s with the disk full: %v, want error 1021 (ER_DISK_FULL)", q, err)
		}
	}
	wantDiskFull("INSERT INTO d.t VALUES (2)")
	s.exec("BEGIN", "INSERT INTO d.t VALUES (3)")
	wantDiskFull("COMMIT") // ends the transaction, as in MySQL
	wantDiskFull("CREATE TABLE d.u (id INT PRIMARY KEY)")
	if err := s.d.p.Err(); err != nil {
		t.Fatalf("the pipeline failed: %v", err)
	}

	fs.full.Store(false)
	s.exec("INSERT INTO d.t VALUES (4)")
	check := func(when string) {
		t.Helper()
		rows, err := s.query("SELECT GROUP_CONCAT(id ORDER BY id) FROM d.t")
		if err != nil || len(rows) != 1 || fmt.Sprint(rows[0][0]) != "1,4" {
			t.Fatalf("%s: rows %v (%v), want 1,4", when, rows, err)
		}
		if _, err := s.query("SELECT * FROM d.u"); err == nil {
			t.Fatalf("%s: table u exists; its CREATE failed with the disk full", when)
		}
		// 2 DDL and 2 inserts: the failed commits gave their numbers back.
		rows, err = s.query("SELECT @@gtid_executed")
		if err != nil || !strings.HasSuffix(fmt.Sprint(rows[0][0]), ":1-4") {
			t.Fatalf("%s: @@gtid_executed %v (%v), want uuid:1-4", when, rows, err)
		}
	}
	check("after space returned")
	m := map[string]int64{}
	s.d.status(m)
	if m["Lockstep_log_disk_full_resumes"] != 3 {
		t.Errorf("Lockstep_log_disk_full_resumes = %d, want 3", m["Lockstep_log_disk_full_resumes"])
	}

	s.close()
	s = openLocal(t, cfg, nil)
	check("after a restart")
	s.exec("INSERT INTO d.t VALUES (5)")
}

// A failed fsync leaves the outcome unknown: 1180, never 1021, and the
// server takes no more writes (an fsync is never retried).
func TestFsyncFailureIsUncertain(t *testing.T) {
	cfg := config.Default()
	cfg.Datadir = t.TempDir()
	fs := &fullFS{}
	s := openLocal(t, cfg, fs)
	s.exec("CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY)")
	fs.syncFail.Store(true)
	for _, q := range []string{"INSERT INTO d.t VALUES (1)", "INSERT INTO d.t VALUES (2)"} {
		_, err := s.query(q)
		var se *mysql.SQLError
		if !errors.As(err, &se) || se.Num != 1180 {
			t.Fatalf("%s after a failed fsync: %v, want 1180", q, err)
		}
	}
	if s.d.p.Err() == nil {
		t.Fatal("the pipeline still takes commits after a failed fsync")
	}
}
