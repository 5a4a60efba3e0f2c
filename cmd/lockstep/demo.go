package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"github.com/spf13/cobra"

	"lockstep/internal/config"
	"lockstep/internal/server"
)

// `lockstep demo`: a local group of members on 127.0.0.1, each a server.Run
// in this process (several servers share a process without sharing their
// data, counters or variables: docs/isolation.md; what go-mysql-server
// keeps per process — its own global variables and status counters — is
// shared by the members, which a demo can live with).

// demoOptions are the demo's flags.
type demoOptions struct {
	members  int
	basePort int
	datadir  string
}

func newDemoCmd() *cobra.Command {
	o := demoOptions{}
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run a local replication group of 3 members",
		Long: "Start a local replication group on 127.0.0.1: --members servers in this process,\n" +
			"their data in a temporary directory (removed at exit) or under --datadir (kept,\n" +
			"and the group restarts from it). It prints how to connect to each member and\n" +
			"which one is the primary (it takes the writes; the others serve reads), and a\n" +
			"line whenever the primary changes. Ctrl-C (SIGINT) or SIGTERM stops the group.",
		Example: "  lockstep demo\n  lockstep demo --members 5 --ports 4000\n  lockstep demo --datadir ./demo-data",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.members < 1 || o.members > 7 || o.members%2 == 0 {
				return fmt.Errorf("--members %d: must be odd, 1..7", o.members)
			}
			if o.basePort < 0 || o.basePort+o.members-1 > 65535 {
				return fmt.Errorf("--ports %d: the members' ports must be in 1..65535 (0: free ports)", o.basePort)
			}
			return demo(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	cmd.Flags().IntVar(&o.members, "members", 3, "number of members (odd, 1..7)")
	cmd.Flags().IntVar(&o.basePort, "ports", 3306, "SQL port of the first member, the others following it; free ports if one is taken (0: free ports)")
	cmd.Flags().StringVar(&o.datadir, "datadir", "", "keep the members' data in this directory (default: a temporary directory, removed at exit)")
	cmd.Flags().SortFlags = false
	return cmd
}

// demoMember is one member of the demo group.
type demoMember struct {
	id   int
	cfg  config.Config
	done chan error
}

func (m *demoMember) mysqlLine() string {
	return fmt.Sprintf("mysql -h 127.0.0.1 -P %d -u root", m.cfg.Port)
}

// demo runs the group until ctx ends or a signal arrives.
func demo(parent context.Context, o demoOptions, out io.Writer) error {
	dir, temp := o.datadir, o.datadir == ""
	if temp {
		d, err := os.MkdirTemp("", "lockstep-demo-")
		if err != nil {
			return runtimeError{fmt.Errorf("demo: creating a temporary directory: %w", err)}
		}
		dir = d
		defer os.RemoveAll(dir)
	} else if err := config.PrepareDatadir(dir); err != nil {
		return err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("datadir %s: %v", dir, err)
	}
	ms, note, err := demoMembers(o, dir)
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case s := <-sigs:
			signal.Stop(sigs) // a second signal kills the process
			fmt.Fprintf(out, "lockstep demo: %v signal received, stopping the group\n", s)
			cancel()
		case <-ctx.Done():
		}
	}()

	// Start every member; each is ready once it listens.
	ready := make(chan int, len(ms))
	for _, m := range ms {
		m.done = make(chan error, 1)
		go func(m *demoMember) {
			var once sync.Once
			m.done <- runServer(ctx, m.cfg, func(string) { once.Do(func() { ready <- m.id }) })
		}(m)
	}
	wait := func() error {
		var errs []error
		for _, m := range ms {
			if err := <-m.done; err != nil {
				errs = append(errs, fmt.Errorf("member %d: %w", m.id, err))
			}
		}
		return errors.Join(errs...)
	}
	for started := 0; started < len(ms); {
		select {
		case <-ready:
			started++
		case <-ctx.Done():
			started = len(ms)
		case <-time.After(100 * time.Millisecond):
			for _, m := range ms {
				select {
				case err := <-m.done:
					m.done <- err // for wait
					cancel()
					werr := wait()
					return runtimeError{fmt.Errorf("demo: member %d did not start: %w", m.id, errors.Join(err, werr))}
				default:
				}
			}
		}
	}

	if ctx.Err() != nil {
		return demoStopped(wait(), temp, dir, out)
	}
	where := dir + " (removed at exit)"
	if !temp {
		where = dir + " (kept)"
	}
	fmt.Fprintf(out, "lockstep demo: a group of %d members on 127.0.0.1, data in %s\n", len(ms), where)
	if note != "" {
		fmt.Fprintf(out, "lockstep demo: %s\n", note)
	}
	for _, m := range ms {
		fmt.Fprintf(out, "  member %d: %s\n", m.id, m.mysqlLine())
		if addr := server.MetricsAddress(m.cfg.Datadir); addr != "" {
			fmt.Fprintf(out, "    metrics: http://%s/metrics\n", addr)
		}
	}
	fmt.Fprintln(out, "lockstep demo: Ctrl-C stops the group")
	watchPrimary(ctx, ms, out)
	return demoStopped(wait(), temp, dir, out)
}

// demoStopped ends the demo once every member stopped (err: theirs): the
// temporary directory is removed.
func demoStopped(err error, temp bool, dir string, out io.Writer) error {
	if temp {
		if rerr := os.RemoveAll(dir); rerr != nil {
			err = errors.Join(err, fmt.Errorf("demo: removing %s: %w", dir, rerr))
		}
	}
	if err != nil {
		return runtimeError{err}
	}
	if temp {
		fmt.Fprintf(out, "lockstep demo: the group stopped; removed %s\n", dir)
	} else {
		fmt.Fprintf(out, "lockstep demo: the group stopped; its data is in %s\n", dir)
	}
	return nil
}

// demoMembers configures the members: their data directories under dir,
// SQL ports from o.basePort (or free ones, said in note), group addresses
// on free ports; a member without raft-state yet bootstraps the group.
func demoMembers(o demoOptions, dir string) (ms []*demoMember, note string, err error) {
	sqlPorts, note, err := demoPorts(o.basePort, o.members)
	if err != nil {
		return nil, "", runtimeError{err}
	}
	groupPorts, _, err := demoPorts(0, o.members)
	if err != nil {
		return nil, "", runtimeError{err}
	}
	seeds := map[uint64]string{}
	for i := 0; i < o.members; i++ {
		seeds[uint64(i+1)] = net.JoinHostPort("127.0.0.1", strconv.Itoa(groupPorts[i]))
	}
	for i := 0; i < o.members; i++ {
		cfg := config.Default()
		cfg.Datadir = filepath.Join(dir, fmt.Sprintf("member-%d", i+1))
		cfg.Port, cfg.BindAddress = sqlPorts[i], "127.0.0.1"
		cfg.ServerID = uint64(i + 1)
		cfg.MetricsAddress = "127.0.0.1:0" // a free port, printed with the member
		cfg.GroupLocalAddress = seeds[cfg.ServerID]
		cfg.GroupSeeds = seeds
		if _, err := os.Stat(filepath.Join(cfg.Datadir, "raft-state")); errors.Is(err, os.ErrNotExist) {
			cfg.GroupBootstrap = true
		}
		if err := cfg.Validate(); err != nil {
			return nil, "", err
		}
		if err := config.PrepareDatadir(cfg.Datadir); err != nil {
			return nil, "", err
		}
		ms = append(ms, &demoMember{id: i + 1, cfg: cfg})
	}
	return ms, note, nil
}

// demoPorts returns n ports: base, base+1, ... when all are free on
// 127.0.0.1, otherwise n ports the kernel says are free (and a note
// saying so). base 0 asks for free ports.
func demoPorts(base, n int) ([]int, string, error) {
	ports := make([]int, 0, n)
	if base != 0 {
		taken := ""
		for p := base; p < base+n; p++ {
			ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
			if err != nil {
				taken = strconv.Itoa(p)
				break
			}
			ln.Close()
			ports = append(ports, p)
		}
		if taken == "" {
			return ports, "", nil
		}
		free, _, err := demoPorts(0, n)
		if err != nil {
			return nil, "", err
		}
		return free, fmt.Sprintf("port %s is taken: the members listen on free ports instead", taken), nil
	}
	// Hold every listener until all are chosen, so that they differ.
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for i := 0; i < n; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, "", fmt.Errorf("demo: finding a free port: %w", err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, "", nil
}

// watchPrimary prints which member is the primary (the one that says it
// takes writes: SHOW STATUS Lockstep_group_replication_primary), and a
// line whenever that changes, until ctx ends.
func watchPrimary(ctx context.Context, ms []*demoMember, out io.Writer) {
	dbs := make([]*sql.DB, len(ms))
	for i, m := range ms {
		db, err := sql.Open("mysql", fmt.Sprintf("root@tcp(127.0.0.1:%d)/?timeout=1s&readTimeout=1s", m.cfg.Port))
		if err != nil {
			fmt.Fprintf(out, "lockstep demo: cannot watch member %d: %v\n", m.id, err)
			return
		}
		db.SetMaxOpenConns(1)
		defer db.Close()
		dbs[i] = db
	}
	shown, last, same := -1, -1, 0
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		p := -1
		for i, db := range dbs {
			var name, val string
			err := db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE 'Lockstep_group_replication_primary'").Scan(&name, &val)
			if err == nil && val == "1" {
				p = i
				break
			}
		}
		// A state is shown once seen twice in a row (an election passes
		// through a moment without a primary).
		if p == last {
			same++
		} else {
			last, same = p, 1
		}
		if same < 2 || p == shown || ctx.Err() != nil {
			continue
		}
		shown = p
		if p < 0 {
			fmt.Fprintln(out, "lockstep demo: no primary at the moment (an election is under way, or a majority of the members is not reachable)")
			continue
		}
		fmt.Fprintf(out, "lockstep demo: the primary is member %d (%s)%s\n", ms[p].id, ms[p].mysqlLine(), secondariesText(ms, p))
	}
}

// secondariesText names the members other than ms[p], for the primary's
// line.
func secondariesText(ms []*demoMember, p int) string {
	var ids []string
	for i, m := range ms {
		if i != p {
			ids = append(ids, strconv.Itoa(m.id))
		}
	}
	switch len(ids) {
	case 0:
		return ""
	case 1:
		return "; member " + ids[0] + " is a secondary (reads only)"
	}
	return "; members " + strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1] + " are secondaries (reads only)"
}
