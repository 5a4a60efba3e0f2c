// Package server wires a lockstep process together: the storage engine, the
// SQL front end, the log, the commit pipeline, checkpoints and recovery,
// and the MySQL-protocol listener, and owns their lifecycle.
// It does not own SQL semantics (internal/sqlfront) or options
// (internal/config).
package server

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	_ "net/http/pprof" // profiling endpoint, only served when LOCKSTEP_PPROF is set
	"os"
	"runtime"
	"strconv"
	"time"

	gmsserver "github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/sirupsen/logrus"

	"lockstep/internal/config"
	"lockstep/internal/sqlfront"
	"lockstep/internal/storage"
)

// ServerVersion is what clients see as the server version (the handshake;
// @@version says the same).
const ServerVersion = sqlfront.ServerVersion

// Run starts a server with cfg and blocks until ctx is cancelled or the
// listener fails. It returns nil after a clean shutdown. ready, when not nil,
// is called once the listener accepts connections, with its address.
//
// Start-up order: the storage engine and the SQL front end, then recovery
// (the newest checkpoint and the log after it, in cfg.Datadir), then the
// commit pipeline, and only then the listener. Progress and problems go to
// stderr.
//
// A group member that fell behind what the group's logs keep receives the
// group's checkpoint and starts again from it (errRestart: the data it
// held is dropped, the listener reopened on the same port).
func Run(ctx context.Context, cfg config.Config, ready func(addr string)) error {
	for {
		err := runOnce(ctx, &cfg, ready)
		if !errors.Is(err, errRestart) || ctx.Err() != nil {
			return err
		}
		ready = nil // called once, at the first start
		cfg.GroupReinstalls++
		fmt.Fprintln(os.Stderr, "lockstep: restarting from the group's checkpoint")
	}
}

// errRestart: runOnce ended for Run to start the server again.
var errRestart = errors.New("lockstep: restart")

// runOnce is one start of the server; a port of 0 in cfg becomes the port
// it listens on, for a restart to take again.
func runOnce(ctx context.Context, cfgp *config.Config, ready func(addr string)) error {
	cfg := *cfgp
	// Error level: what an operator must act on; a client's mistakes are
	// at debug level or below (clientlog.go).
	logrus.SetLevel(logrus.ErrorLevel)
	store := storage.New(storage.Options{})
	fe, err := sqlfront.New(sqlfront.Options{User: cfg.User, Password: cfg.Password, Store: store})
	if err != nil {
		store.Close()
		return fmt.Errorf("start SQL engine: %w", err)
	}
	defer fe.Close()
	if cfg.MetricsAddress != "" {
		// Before recovery, so that a bad address is found at once
		// (metrics.go); scrapes during recovery see what exists so far.
		me, err := startMetrics(cfg.MetricsAddress, cfg.Datadir, fe, os.Stderr)
		if err != nil {
			return err
		}
		defer me.close()
	}
	d, err := openDurable(cfg, fe, os.Stderr)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := d.close(); cerr != nil {
			fmt.Fprintf(os.Stderr, "lockstep: closing the log: %v\n", cerr)
		}
	}()

	if cfg.GCPaceTables {
		pacer := newGCPacer(func() int64 {
			m := store.RowMemory()
			return m.ArenaBytes + m.SlotBytes + m.TreeBytes
		})
		fe.SetGCPercentSource(pacer.percent.Load)
		pctx, stopPacer := context.WithCancel(ctx)
		pdone := make(chan struct{})
		go func() { defer close(pdone); pacer.run(pctx, time.Second) }()
		defer func() { stopPacer(); <-pdone }()
	}

	if addr := os.Getenv("LOCKSTEP_PPROF"); addr != "" {
		// e.g. LOCKSTEP_PPROF=127.0.0.1:6060; go tool pprof http://ADDR/debug/pprof/profile
		// LOCKSTEP_PPROF_CONTENTION=N also samples 1 in N mutex contentions
		// and blocking events of at least N ns (/debug/pprof/mutex, /block).
		if n, err := strconv.Atoi(os.Getenv("LOCKSTEP_PPROF_CONTENTION")); err == nil && n > 0 {
			runtime.SetMutexProfileFraction(n)
			runtime.SetBlockProfileRate(n)
		}
		go func() { _ = http.ListenAndServe(addr, nil) }()
	}

	addr := net.JoinHostPort(cfg.BindAddress, strconv.Itoa(cfg.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	port := cfg.Port
	if a, ok := ln.Addr().(*net.TCPAddr); ok {
		port = a.Port
	}
	cfgp.Port = port
	if d.grp != nil {
		d.grp.setSQLAddress(cfg.BindAddress, port) // groupinfo.go
	}
	if err := installConfigVars(fe, cfg, port); err != nil {
		ln.Close()
		return err
	}
	if err := installFileAccess(fe, cfg); err != nil {
		ln.Close()
		return err
	}
	limited := &limitListener{Listener: ln, max: func() int64 {
		v, _ := fe.GlobalVariable("max_connections")
		n, ok := v.(int64)
		if !ok {
			return 151
		}
		return n
	}}
	limited.packet = func() int64 {
		v, _ := fe.GlobalVariable("max_allowed_packet")
		if n, ok := v.(int64); ok {
			return n
		}
		if n, ok := v.(uint64); ok {
			return int64(n)
		}
		return defaultMaxAllowedPacket
	}
	started := time.Now()
	limited.stats = func() string {
		var questions int64
		if _, v, ok := sql.StatusVariables.GetGlobal("Questions"); ok {
			questions, _ = v.(int64)
			if u, isU := v.(uint64); isU {
				questions = int64(u)
			}
		}
		return statisticsLine(started, limited.open.Load(), questions)
	}
	fe.AddExtraStatus(limited.status)
	lat := newStmtLatency() // stmtlatency.go
	fe.AddExtraStatus(lat.status)
	var tlsCfg *tls.Config
	if cfg.SSL {
		if tlsCfg, err = serverTLS(cfg.Datadir, cfg.BindAddress); err != nil {
			ln.Close()
			return err
		}
	}
	limited.tls = tlsCfg
	// connect_timeout, and who may have the slot beyond max_connections (connlimit.go)
	limited.timeout, limited.admin = connectTimeout(fe), connectionAdmin(fe)
	procs, ok := fe.Engine.ProcessList.(*processList) // processlist.go
	if !ok {
		procs = &processList{ProcessList: fe.Engine.ProcessList}
		fe.Engine.ProcessList = procs
	}
	stop := newStopper() // SHUTDOWN (shutdown.go)
	srv, err := gmsserver.NewServerWithHandler(gmsserver.Config{
		// TLS is ended below the protocol layer (tlsterm.go)
		Protocol: "tcp",
		Address:  ln.Addr().String(),
		Listener: limited,
		Version:  ServerVersion,
		// unknown users get 1045 as in MySQL (auth.go)
		ProtocolListenerFactory: withUnknownUsers(procs.loggedIn, limited.admit),
	}, fe.Engine, sql.NewContext, withTLSStatus(fe.NewSession), nil, wrapHandlerFor(fe, stop, lat))
	if err != nil {
		ln.Close()
		return fmt.Errorf("start server: %w", err)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Start() }()
	if ready != nil {
		ready(ln.Addr().String())
	}
	var restart <-chan struct{} // nil: never
	if d.grp != nil {
		restart = d.grp.restart
	}
	select {
	case <-ctx.Done():
		_ = srv.Close()
		<-errc
		return nil
	case <-restart:
		_ = srv.Close()
		<-errc
		limited.closeAll()
		return errRestart
	case <-stop.c:
		fmt.Fprintln(os.Stderr, "lockstep: SHUTDOWN received, shutting down")
		_ = srv.Close()
		<-errc
		return nil
	case err := <-errc:
		if err != nil && !errors.Is(err, net.ErrClosed) {
			return fmt.Errorf("server stopped: %w", err)
		}
		return nil
	}
}
