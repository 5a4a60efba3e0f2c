package server

import (
	"fmt"
	"testing"

	"lockstep/internal/config"
)

// TestLogCompression: with --log-compression (the default) a record above
// the threshold is stored compressed and counted in
// Lockstep_log_records_compressed; without, nothing is; either way it reads
// back whole after a restart.
func TestLogCompression(t *testing.T) {
	if !config.Default().LogCompression {
		t.Fatal("log compression is off by default")
	}
	for _, on := range []bool{false, true} {
		t.Run(fmt.Sprint("compression=", on), func(t *testing.T) {
			cfg := config.Default()
			cfg.Datadir = t.TempDir()
			cfg.LogCompression = on
			cfg.CheckpointLogSize = 0
			s := openLocal(t, cfg, nil)
			s.exec("CREATE DATABASE d", "CREATE TABLE d.t (id INT PRIMARY KEY, v TEXT)",
				"INSERT INTO d.t VALUES (1, REPEAT('abc', 10000)), (2, 'small')")
			m := map[string]int64{}
			s.d.status(m)
			got := m["Lockstep_log_records_compressed"]
			if on && got != 1 || !on && got != 0 {
				t.Fatalf("Lockstep_log_records_compressed = %d with compression %v", got, on)
			}
			s.close()
			s = openLocal(t, cfg, nil)
			rows, err := s.query("SELECT id, LENGTH(v) FROM d.t ORDER BY id")
			if err != nil || fmt.Sprint(rows) != "[[1 30000] [2 5]]" {
				t.Fatalf("after restart: %v (%v)", rows, err)
			}
			s.close()
		})
	}
}
