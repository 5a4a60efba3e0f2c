package compare

import (
	"context"
	"fmt"

	"lockstep/internal/bench/oltp"
	"lockstep/internal/bench/sysbench"
)

// Client is the program that runs the oltp cells' transactions. TPC-C
// cells always run lockstep bench tpcc's driver.
type Client int

const (
	// BuiltinClient is lockstep bench oltp's Go client (internal/bench/oltp),
	// run in compare's process.
	BuiltinClient Client = iota
	// SysbenchClient is Debian's sysbench 1.0.20 binary, one process per
	// run (internal/bench/sysbench): the reference client.
	SysbenchClient
)

func (c Client) String() string {
	switch c {
	case BuiltinClient:
		return "lockstep"
	case SysbenchClient:
		return "sysbench"
	}
	return fmt.Sprintf("client(%d)", int(c))
}

// ParseClient reads --client: lockstep (the built-in client) or sysbench.
func ParseClient(s string) (Client, error) {
	switch s {
	case "lockstep", "builtin":
		return BuiltinClient, nil
	case "sysbench":
		return SysbenchClient, nil
	}
	return 0, fmt.Errorf("--client must be lockstep or sysbench, not %q", s)
}

// tpccClient names TPC-C cells' client in the output.
const tpccClient = "lockstep bench tpcc"

// oltpClient runs the oltp cells with the configured client.
type oltpClient struct {
	kind    Client
	bin     string // sysbench's path
	version string // "sysbench 1.0.20"
}

// newOLTPClient finds the client's program (sysbench must be installed;
// the error says how), before any target is started.
func newOLTPClient(ctx context.Context, c Client) (*oltpClient, error) {
	if c != SysbenchClient {
		return &oltpClient{kind: BuiltinClient}, nil
	}
	bin, err := sysbench.Find()
	if err != nil {
		return nil, fmt.Errorf("--client sysbench: %w", err)
	}
	v, err := sysbench.Version(ctx, bin)
	if err != nil {
		return nil, fmt.Errorf("--client sysbench: %w", err)
	}
	return &oltpClient{kind: SysbenchClient, bin: bin, version: v}, nil
}

// Name is the client as runs.csv and the plots name it.
func (o *oltpClient) Name() string {
	if o.kind == SysbenchClient {
		return o.version
	}
	return "lockstep bench oltp"
}

// describe is the client's line in results.md.
func (o *oltpClient) describe() string {
	if o.kind == SysbenchClient {
		return fmt.Sprintf("%s (%s; `--client sysbench`), one process per run, an unmeasured run of the warm-up's length before each measured one (sysbench has no warm-up option); p50 and p99 from its latency histogram (buckets about 1.5%% apart); it stops a run at an error it does not ignore (1213, 1205 and 1020 restart the transaction, counted as retries), which fails the comparison", o.version, o.bin)
	}
	return "lockstep bench oltp (the built-in Go client, `--client lockstep`)"
}

func (o *oltpClient) run(ctx context.Context, cfg oltp.Config) (*oltp.Result, error) {
	if o.kind == SysbenchClient {
		return sysbench.Run(ctx, o.bin, cfg)
	}
	return oltp.Run(ctx, cfg)
}
