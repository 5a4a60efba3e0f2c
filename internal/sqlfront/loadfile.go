package sqlfront

import (
	"fmt"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// LOAD_FILE(name), in place of go-mysql-server's, which read any file the
// process could (no FILE privilege, secure_file_priv compared as text) and
// panicked once max_allowed_packet had been SET (an unsigned value where
// it asserted a signed one).
//
// As in MySQL the result is NULL, never an error, when the account lacks
// FILE, the policy refuses the path (fileaccess.go), the file cannot be
// read, or it is larger than the session's max_allowed_packet (then with
// warning 1301, as MySQL 8).

type loadFile struct {
	expression.UnaryExpression
}

var _ sql.FunctionExpression = (*loadFile)(nil)
var _ sql.CollationCoercible = (*loadFile)(nil)

func newLoadFile(x sql.Expression) sql.Expression {
	return &loadFile{UnaryExpression: expression.UnaryExpression{Child: x}}
}

func (l *loadFile) FunctionName() string { return "load_file" }
func (l *loadFile) Description() string {
	return "returns the contents of a file on the server's host (FILE privilege, secure_file_priv)."
}
func (l *loadFile) String() string   { return fmt.Sprintf("load_file(%s)", l.Child) }
func (l *loadFile) Type() sql.Type   { return types.LongBlob }
func (l *loadFile) IsNullable() bool { return true }

func (*loadFile) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 4
}

func (l *loadFile) WithChildren(children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(l, len(children), 1)
	}
	return newLoadFile(children[0]), nil
}

func (l *loadFile) Eval(ctx *sql.Context, row sql.Row) (interface{}, error) {
	v, err := l.Child.Eval(ctx, row)
	if err != nil || v == nil {
		return nil, err
	}
	name, _, err := types.LongText.Convert(ctx, v)
	if err != nil {
		return nil, nil
	}
	fe := frontendOf(ctx)
	if fe == nil || !fe.hasAnyPriv(ctx, sql.PrivilegeType_File) {
		return nil, nil
	}
	f, err := fe.openServerFile(name.(string), false)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, nil
	}
	limit := sessionMaxPacket(ctx)
	if st.Size() > limit {
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: 1301,
			Message: fmt.Sprintf("Result of load_file() was larger than max_allowed_packet (%d) - truncated", limit)})
		return nil, nil
	}
	// The file may grow after the stat: read at most the limit, one byte
	// more to notice.
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil
	}
	if int64(len(data)) > limit {
		ctx.Session.Warn(&sql.Warning{Level: "Warning", Code: 1301,
			Message: fmt.Sprintf("Result of load_file() was larger than max_allowed_packet (%d) - truncated", limit)})
		return nil, nil
	}
	return data, nil
}

// sessionMaxPacket is the session's max_allowed_packet (signed or
// unsigned, as SET stored it); MySQL 8's default if unreadable.
func sessionMaxPacket(ctx *sql.Context) int64 {
	v, err := ctx.Session.GetSessionVariable(ctx, "max_allowed_packet")
	if err == nil {
		if neg, mag, _, ok := intValue(v); ok && !neg { // intarith.go
			return int64(min(mag, 1<<62))
		}
	}
	return 64 << 20
}
