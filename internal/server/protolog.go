package server

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vtlog "github.com/dolthub/vitess/go/vt/log"
	"github.com/sirupsen/logrus"
)

// The protocol layer's log.
//
// vitess logs through its vt/log functions, which go-mysql-server points
// at logrus (Run lets Error and above through), and go-mysql-server logs
// through logrus itself. Both log a line for many a client's mistake (a
// malformed packet, an unknown command with the whole packet printed as
// numbers, a statement that failed to prepare with its whole text), and
// vitess, with the stack, every panic it catches in a connection's
// goroutine: a client sending garbage in a loop could fill the disk, and a
// megabyte-long user name was logged whole. For the whole process (as
// go-mysql-server's own settings are):
//
//   - every panic vitess catches is counted in protocolPanics (SHOW GLOBAL
//     STATUS Lockstep_protocol_panics), logged or not: each is a bug, and
//     the tests fail on any (TestProtocolFuzz);
//   - vitess's arguments are cut before they are formatted (maxLogArg
//     bytes of a string or []byte);
//   - logrus's output writes at most logBurst lines at once and logRate a
//     second after that, each cut to maxLogLine bytes; the lines dropped
//     are counted and the count written with the next line let through.

const (
	logBurst   = 20
	logRate    = 2 // lines a second, after the burst
	maxLogArg  = 4096
	maxLogLine = 4096

	panicPrefix = "mysql_server caught panic"
)

// protocolPanics counts the panics vitess caught in connection handlers,
// in this process (its log is the process's, not a server's).
var protocolPanics atomic.Int64

func init() {
	logrus.SetOutput(&limitedLog{w: os.Stderr, now: time.Now})
	vtlog.Info = func(a ...any) { vitessLog(logrus.InfoLevel, "", a) }
	vtlog.Infof = func(f string, a ...any) { vitessLog(logrus.InfoLevel, f, a) }
	vtlog.Warning = func(a ...any) { vitessLog(logrus.WarnLevel, "", a) }
	vtlog.Warningf = func(f string, a ...any) { vitessLog(logrus.WarnLevel, f, a) }
	vtlog.Error = func(a ...any) { vitessLog(logrus.ErrorLevel, "", a) }
	vtlog.Errorf = func(f string, a ...any) {
		if strings.HasPrefix(f, panicPrefix) {
			protocolPanics.Add(1)
		}
		vitessLog(logrus.ErrorLevel, f, a)
	}
}

// vitessLog logs one of vitess's lines: format f, or a as fmt.Sprint does
// when f is empty.
func vitessLog(level logrus.Level, f string, a []any) {
	if !logrus.IsLevelEnabled(level) {
		return
	}
	a = cutArgs(a)
	if f == "" {
		logrus.StandardLogger().Log(level, fmt.Sprint(a...))
		return
	}
	logrus.StandardLogger().Logf(level, f, a...)
}

// cutArgs shortens long strings and byte slices among a.
func cutArgs(a []any) []any {
	var out []any
	for i, v := range a {
		var cut any
		switch x := v.(type) {
		case string:
			if len(x) > maxLogArg {
				cut = x[:maxLogArg] + "..."
			}
		case []byte:
			if len(x) > maxLogArg {
				cut = x[:maxLogArg]
			}
		}
		if cut == nil {
			continue
		}
		if out == nil {
			out = append([]any(nil), a...)
		}
		out[i] = cut
	}
	if out == nil {
		return a
	}
	return out
}

// limitedLog is logrus's output: it writes its lines (logrus writes each
// entry whole) at a bounded rate, a token bucket.
type limitedLog struct {
	w   io.Writer
	now func() time.Time

	mu      sync.Mutex
	tokens  float64
	last    time.Time
	started bool
	dropped int64
}

func (l *limitedLog) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil // a line the formatter left out (clientlog.go)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if !l.started {
		l.started, l.tokens = true, logBurst
	} else {
		l.tokens = min(logBurst, l.tokens+now.Sub(l.last).Seconds()*logRate)
	}
	l.last = now
	if l.tokens < 1 {
		l.dropped++
		return len(p), nil
	}
	l.tokens--
	if l.dropped > 0 {
		fmt.Fprintf(l.w, "lockstep: %d log lines dropped (more than %d a second)\n", l.dropped, logRate)
		l.dropped = 0
	}
	line := p
	if len(line) > maxLogLine {
		line = append(append(line[:maxLogLine:maxLogLine], fmt.Sprintf("... (%d bytes)", len(p))...), '\n')
	}
	if _, err := l.w.Write(line); err != nil {
		return 0, err
	}
	return len(p), nil
}
