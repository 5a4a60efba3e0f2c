package integration

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"lockstep/internal/testutil"
)

// The tests share one lockstep server: starting one takes about half a
// second, and several seconds with -race.
var shared struct {
	once sync.Once
	tb   *processTB
	srv  *testutil.Server
	err  error
}

// sharedServer starts the shared server on first use.
func sharedServer() (*testutil.Server, error) {
	shared.once.Do(func() {
		shared.tb = &processTB{}
		shared.srv, shared.err = shared.tb.run(func() *testutil.Server {
			return testutil.StartServer(shared.tb)
		})
	})
	return shared.srv, shared.err
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if shared.tb != nil {
		// Stops the server (testutil's cleanup); it reports, through
		// Errorf, a server that crashed or did not shut down cleanly.
		shared.tb.runCleanups()
		if shared.tb.Failed() {
			fmt.Fprintln(os.Stderr, "FAIL: the shared lockstep server did not end cleanly (see above)")
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// processTB is the testing.TB given to testutil for the shared server,
// which outlives every single test. It implements the methods testutil
// uses; the embedded nil TB makes any other method panic loudly.
type processTB struct {
	testing.TB

	mu       sync.Mutex
	failed   bool
	cleanups []func()
	dirs     []string
}

// errFatal carries a Fatal call out of the function run by run.
type errFatal struct{ msg string }

// run calls f, turning a Fatal inside it into an error.
func (p *processTB) run(f func() *testutil.Server) (srv *testutil.Server, err error) {
	defer func() {
		if r := recover(); r != nil {
			fe, ok := r.(errFatal)
			if !ok {
				panic(r)
			}
			err = errors.New(fe.msg)
		}
	}()
	return f(), nil
}

func (p *processTB) Helper()      {}
func (p *processTB) Name() string { return "shared-lockstep-server" }

func (p *processTB) Log(args ...any) { fmt.Fprintln(os.Stderr, args...) }
func (p *processTB) Logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
}

func (p *processTB) Error(args ...any) { p.Log(args...); p.Fail() }
func (p *processTB) Errorf(format string, args ...any) {
	p.Logf(format, args...)
	p.Fail()
}

func (p *processTB) Fatal(args ...any) { p.Fail(); panic(errFatal{fmt.Sprint(args...)}) }
func (p *processTB) Fatalf(format string, args ...any) {
	p.Fail()
	panic(errFatal{fmt.Sprintf(format, args...)})
}
func (p *processTB) FailNow() { p.Fatal("FailNow") }

func (p *processTB) Fail() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failed = true
}

func (p *processTB) Failed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.failed
}

func (p *processTB) Cleanup(f func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cleanups = append(p.cleanups, f)
}

func (p *processTB) TempDir() string {
	dir, err := os.MkdirTemp("", "lockstep-integration-")
	if err != nil {
		p.Fatalf("TempDir: %v", err)
	}
	p.mu.Lock()
	p.dirs = append(p.dirs, dir)
	p.mu.Unlock()
	return dir
}

// runCleanups runs the registered cleanups, last first, then removes the
// temporary directories.
func (p *processTB) runCleanups() {
	for {
		p.mu.Lock()
		n := len(p.cleanups)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		f := p.cleanups[n-1]
		p.cleanups = p.cleanups[:n-1]
		p.mu.Unlock()
		f()
	}
	for _, d := range p.dirs {
		os.RemoveAll(d)
	}
}
