package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
)

// TestBenchUsage: bad `lockstep bench` command lines fail with exit code 2
// and one line on stderr, before any connection is made.
func TestBenchUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"bench"}, "name a benchmark"},
		{[]string{"bench", "tpcb"}, `unknown benchmark "tpcb"`},
		{[]string{"bench", "tpcc", "--warehouses", "0"}, "--warehouses must be"},
		{[]string{"bench", "tpcc", "--threads", "-1"}, "--threads must be"},
		{[]string{"bench", "tpcc", "--scale-down", "1000"}, "--scale-down must be"},
		{[]string{"bench", "tpcc", "--duration", "soon"}, "not a duration"},
		{[]string{"bench", "tpcc", "--dsn", "root@tcp(127.0.0.1:3306"}, "--dsn"},
		{[]string{"bench", "tpcc", "--nosuchflag"}, "unknown flag"},
		{[]string{"bench", "tpcc", "extra"}, "unknown command"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), tc.args, &stdout, &stderr)
		msg := stderr.String()
		if code != exitUsage || !strings.Contains(msg, tc.want) || strings.Count(msg, "\n") != 1 || !strings.HasPrefix(msg, "lockstep: ") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
}

// TestBenchUnreachable: a server that cannot be reached is a runtime error
// (exit code 1), reported in one line.
func TestBenchUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"bench", "tpcc", "--dsn", fmt.Sprintf("root@tcp(%s)/tpcc", addr), "--duration", "1"}, &stdout, &stderr)
	msg := stderr.String()
	if code != exitRuntime || !strings.Contains(msg, "bench tpcc: connecting to "+addr) || strings.Count(msg, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want exit 1 and one line about connecting", code, msg)
	}
}
