package main

import (
	"testing"
	"time"
)

func TestCountMySQLSet(t *testing.T) {
	for _, c := range []struct {
		set  string
		want int64
	}{
		{"", 0},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5", 5},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5:7:9-10", 8},
		{"3e11fa47-71ca-11e1-9e33-c80aa9429562:1-3,\n4e11fa47-71ca-11e1-9e33-c80aa9429562:1", 4},
	} {
		got, err := countMySQLSet(c.set)
		if err != nil || got != c.want {
			t.Errorf("countMySQLSet(%q) = %d, %v; want %d", c.set, got, err, c.want)
		}
	}
	if _, err := countMySQLSet("uuid:x-3"); err == nil {
		t.Error("countMySQLSet of a bad interval: no error")
	}
}

func TestCountMariaDBPos(t *testing.T) {
	for _, c := range []struct {
		pos  string
		want int64
	}{
		{"", 0},
		{"0-1-123", 123},
		{"0-1-123,1-2-5", 128},
	} {
		got, err := countMariaDBPos(c.pos)
		if err != nil || got != c.want {
			t.Errorf("countMariaDBPos(%q) = %d, %v; want %d", c.pos, got, err, c.want)
		}
	}
	if _, err := countMariaDBPos("0-123"); err == nil {
		t.Error("countMariaDBPos of a two-part position: no error")
	}
}

// TestLagSeconds: the lag in seconds is the time from a primary
// sample to the first replica sample at or past its count.
func TestLagSeconds(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	p := &target{primary: true, samples: []sample{{at: ms(0), count: 10}, {at: ms(100), count: 20}, {at: ms(200), count: 30}}}
	r := &target{samples: []sample{{at: ms(0), count: 0}, {at: ms(100), count: 10}, {at: ms(200), count: 15}, {at: ms(300), count: 30}}}
	txns, secs, _ := lags("mariadb", p, r, 3)
	wantTxns := []float64{10, 10, 15}
	wantSecs := []float64{0.1, 0.2, 0.1}
	for i := range wantTxns {
		if txns[i] != wantTxns[i] || secs[i] < wantSecs[i]-1e-9 || secs[i] > wantSecs[i]+1e-9 {
			t.Fatalf("lags = %v, %v; want %v, %v", txns, secs, wantTxns, wantSecs)
		}
	}
}
