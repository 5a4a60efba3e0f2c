package server

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"lockstep/internal/config"
)

// TestShutdownDuringPacedCheckpoint: a shutdown does not wait out a
// checkpoint's pacing (--checkpoint-rate-limit): the checkpoint is
// abandoned (its temporary file removed) and the server stops at once;
// everything committed is there after a restart, from the log.
func TestShutdownDuringPacedCheckpoint(t *testing.T) {
	var datadir string
	paced := func(c *config.Config) {
		c.CheckpointLogSize = 1    // a checkpoint as soon as there is log
		c.CheckpointRateLimit = 64 // bytes per second: the file takes minutes
		if datadir != "" {
			c.Datadir = datadir
		}
	}
	s := startInProcess(t, paced)
	datadir = s.datadir
	s.exec(t, "CREATE DATABASE d")
	s.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(100))")
	for i := 0; i < 50; i++ {
		s.exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d, '%s')", i, strings.Repeat("x", 80)))
	}
	ckdir := filepath.Join(datadir, "checkpoint")
	deadline := time.Now().Add(20 * time.Second)
	for {
		tmps, _ := filepath.Glob(filepath.Join(ckdir, "*.tmp"))
		if len(tmps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint started within 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
	start := time.Now()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("shutdown took %v: it waited for the paced checkpoint", el)
	}
	if tmps, _ := filepath.Glob(filepath.Join(ckdir, "*.tmp")); len(tmps) != 0 {
		t.Fatalf("the abandoned checkpoint's file is left: %v", tmps)
	}
	if _, err := os.Stat(datadir); err != nil {
		t.Fatal(err)
	}
	s = startInProcess(t, func(c *config.Config) { c.Datadir = datadir; c.CheckpointLogSize = 0 })
	if got := s.str(t, "SELECT COUNT(*) FROM d.t"); got != "50" {
		t.Fatalf("after the restart: %s rows, want 50", got)
	}
}

// TestDDLDuringPacedCheckpoint: a DDL statement, which waits for a running
// checkpoint (the checkpoint keeps DDL out while it reads), makes a paced
// checkpoint finish at full speed rather than at --checkpoint-rate-limit.
func TestDDLDuringPacedCheckpoint(t *testing.T) {
	s := startInProcess(t, func(c *config.Config) {
		c.CheckpointLogSize = 1
		c.CheckpointRateLimit = 64 // bytes per second: minutes for this file
	})
	s.exec(t, "CREATE DATABASE d")
	s.exec(t, "CREATE TABLE d.t (id INT PRIMARY KEY, v VARCHAR(100))")
	for i := 0; i < 50; i++ {
		s.exec(t, fmt.Sprintf("INSERT INTO d.t VALUES (%d, '%s')", i, strings.Repeat("x", 80)))
	}
	ckdir := filepath.Join(s.datadir, "checkpoint")
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if tmps, _ := filepath.Glob(filepath.Join(ckdir, "*.tmp")); len(tmps) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no checkpoint started within 20 s")
		}
	}
	start := time.Now()
	s.exec(t, "CREATE TABLE d.t2 (id INT PRIMARY KEY)")
	if el := time.Since(start); el > 10*time.Second {
		t.Fatalf("CREATE TABLE took %v: the checkpoint kept its pace while DDL waited", el)
	}
}
