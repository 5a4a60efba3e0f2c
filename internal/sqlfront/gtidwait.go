package sqlfront

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"lockstep/internal/config"
)

// WAIT_FOR_EXECUTED_GTID_SET(gtid_set[, timeout]), as MySQL's: waits until
// every GTID of gtid_set is executed on this server and returns 0, or
// returns 1 when timeout seconds (fractions allowed; 0 or none: no limit)
// pass first. A session reads @@gtid_executed on the primary after its
// write and waits for it on a secondary to read its own writes there.
// KILL QUERY stops the wait (1317). A malformed set is MySQL's 1772, a
// negative timeout 1210. A GTID of another source than this server's is
// never executed here, so a wait for one lasts until its timeout.
//
// This server's executed GTIDs are always source:1-N (a dense range):
// GTIDSource says which source and N.

// GTIDSource tells the server's executed GTIDs: the UUID they carry and
// the newest GNO (all GNOs up to it are executed).
type GTIDSource func() (uuid string, last int64)

// SetGTIDSource installs the server's GTID source.
func (fe *Frontend) SetGTIDSource(f GTIDSource) { fe.gtidSource.Store(&f) }

type gtidSourceHolder = atomic.Pointer[GTIDSource]

// gtidInterval is [lo, hi] of GNOs.
type gtidInterval struct{ lo, hi int64 }

// parseGTIDSet parses MySQL's GTID set text: uuid:interval[:interval...]
// joined by commas, an interval N or N-M (N >= 1, M >= N); spaces and
// newlines around the parts are allowed; the empty string is the empty set.
func parseGTIDSet(s string) (map[string][]gtidInterval, bool) {
	out := map[string][]gtidInterval{}
	if strings.TrimSpace(s) == "" {
		return out, true
	}
	for _, part := range strings.Split(s, ",") {
		fields := strings.Split(strings.TrimSpace(part), ":")
		uuid := strings.ToLower(strings.TrimSpace(fields[0]))
		if !config.IsUUID(uuid) || len(fields) < 2 {
			return nil, false
		}
		for _, iv := range fields[1:] {
			lo, hi, found := strings.Cut(strings.TrimSpace(iv), "-")
			a, err := strconv.ParseInt(strings.TrimSpace(lo), 10, 64)
			if err != nil || a < 1 {
				return nil, false
			}
			b := a
			if found {
				if b, err = strconv.ParseInt(strings.TrimSpace(hi), 10, 64); err != nil || b < a {
					return nil, false
				}
			}
			out[uuid] = append(out[uuid], gtidInterval{a, b})
		}
	}
	return out, true
}

// executedHolds reports whether every GTID of set is executed, the server
// having executed source:1-last.
func executedHolds(set map[string][]gtidInterval, source string, last int64) bool {
	for uuid, ivs := range set {
		for _, iv := range ivs {
			if uuid != strings.ToLower(source) || iv.hi > last {
				return false
			}
		}
	}
	return true
}

type waitGTIDs struct {
	args []sql.Expression
}

var _ sql.FunctionExpression = (*waitGTIDs)(nil)

func newWaitGTIDs(args ...sql.Expression) (sql.Expression, error) {
	if len(args) < 1 || len(args) > 2 {
		return nil, sql.ErrInvalidArgumentNumber.New("WAIT_FOR_EXECUTED_GTID_SET", "1 or 2", len(args))
	}
	return &waitGTIDs{args: args}, nil
}

func (w *waitGTIDs) FunctionName() string { return "wait_for_executed_gtid_set" }
func (w *waitGTIDs) Description() string {
	return "waits until the given GTIDs are executed on this server."
}
func (w *waitGTIDs) Resolved() bool {
	for _, a := range w.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}
func (w *waitGTIDs) String() string {
	parts := make([]string, len(w.args))
	for i, a := range w.args {
		parts[i] = a.String()
	}
	return "wait_for_executed_gtid_set(" + strings.Join(parts, ", ") + ")"
}
func (w *waitGTIDs) Type() sql.Type             { return types.Int64 }
func (w *waitGTIDs) IsNullable() bool           { return true }
func (w *waitGTIDs) Children() []sql.Expression { return w.args }
func (w *waitGTIDs) IsNonDeterministic() bool   { return true }
func (w *waitGTIDs) WithChildren(c ...sql.Expression) (sql.Expression, error) {
	return newWaitGTIDs(c...)
}

func errWaitArgs() error {
	return mysql.NewSQLError(1210, "HY000", "Incorrect arguments to WAIT_FOR_EXECUTED_GTID_SET.")
}

func (w *waitGTIDs) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	v, err := w.args[0].Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	text, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return nil, errWaitArgs()
	}
	set, ok := parseGTIDSet(text.(string))
	if !ok {
		return nil, mysql.NewSQLError(1772, "HY000", "Malformed GTID set specification '%s'.", text)
	}
	var deadline time.Time
	if len(w.args) == 2 {
		tv, err := w.args[1].Eval(ctx, row)
		if err != nil {
			return nil, err
		}
		if tv != nil {
			f, _, err := types.Float64.Convert(ctx, tv)
			if err != nil {
				return nil, errWaitArgs()
			}
			secs := f.(float64)
			if secs < 0 {
				return nil, errWaitArgs()
			}
			if secs > 0 {
				deadline = time.Now().Add(time.Duration(secs * float64(time.Second)))
			}
		}
	}
	fe := frontendOf(ctx)
	var src GTIDSource
	if fe != nil {
		if p := fe.gtidSource.Load(); p != nil {
			src = *p
		}
	}
	pause := 100 * time.Microsecond
	for {
		if src != nil {
			uuid, last := src()
			if executedHolds(set, uuid, last) {
				return int64(0), nil
			}
		} else if len(set) == 0 {
			return int64(0), nil
		}
		if !deadline.IsZero() && time.Now().After(deadline) {
			return int64(1), nil
		}
		select {
		case <-ctx.Done():
			// KILL QUERY, KILL, max_execution_time: 1317 (3024 for the
			// last, which the protocol layer tells apart).
			return nil, mysql.NewSQLError(mysql.ERQueryInterrupted, mysql.SSQueryInterrupted, "Query execution was interrupted")
		case <-time.After(pause):
		}
		pause = min(pause*2, 5*time.Millisecond)
	}
}
