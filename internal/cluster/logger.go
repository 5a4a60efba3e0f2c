package cluster

import (
	"fmt"

	"go.etcd.io/raft/v3"
)

// quietLogger drops raft's debug and info lines and keeps warnings and
// errors for Logf; Fatal and Panic panic as raft expects.
type quietLogger struct {
	logf func(format string, args ...any)
}

var _ raft.Logger = quietLogger{}

func (l quietLogger) out(level, format string, args ...any) {
	if l.logf != nil {
		l.logf(level+": "+format, args...)
	}
}

func (quietLogger) Debug(...any)          {}
func (quietLogger) Debugf(string, ...any) {}
func (quietLogger) Info(...any)           {}
func (quietLogger) Infof(string, ...any)  {}
func (l quietLogger) Warning(v ...any)    { l.out("raft warning", "%s", fmt.Sprint(v...)) }
func (l quietLogger) Warningf(f string, v ...any) {
	l.out("raft warning", f, v...)
}
func (l quietLogger) Error(v ...any)            { l.out("raft error", "%s", fmt.Sprint(v...)) }
func (l quietLogger) Errorf(f string, v ...any) { l.out("raft error", f, v...) }
func (quietLogger) Fatal(v ...any)              { panic(fmt.Sprint(v...)) }
func (quietLogger) Fatalf(f string, v ...any)   { panic(fmt.Sprintf(f, v...)) }
func (quietLogger) Panic(v ...any)              { panic(fmt.Sprint(v...)) }
func (quietLogger) Panicf(f string, v ...any)   { panic(fmt.Sprintf(f, v...)) }
