package server

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"strconv"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"lockstep/internal/sqlfront"
)

// Prepared statements with a fast-path plan, answered below the protocol
// layer.
//
// vitess parses every COM_STMT_EXECUTE into a new map of bind variables,
// naming each parameter with fmt.Sprintf("v%d") and boxing its value in a
// new protobuf message: in TPC-C at 16 threads that was 7% of the server's
// CPU and a fifth of the bytes it allocated (a New-Order inserts ten order
// lines of ten parameters each in one statement). For a statement the fast
// path has a plan for, wireConn hands the whole execute packet to
// execHook instead: it parses the parameters into bind variables it keeps
// per statement and reuses, runs the plan (sqlfront's FastPlanned and Run,
// the two halves of the FastExecute handler.ComStmtExecute calls), and
// writes the response packets itself, byte for byte as vitess would (the one difference: an OK packet carries
// the statement's warning count, as MySQL's does; vitess sends 0 after a
// prepared statement).
//
// Anything else is passed on untouched and vitess handles it as before:
// no plan, lockstep_fast_protocol or lockstep_fast_path OFF, a cursor
// requested, parameters sent with COM_STMT_SEND_LONG_DATA, a date or time
// parameter (vitess turns those into text its own way), an iteration count
// other than 1, a malformed packet, a packet of 16 MiB or more. (TLS
// connections are seen too: wireConn ends TLS itself, tlsterm.go.) When
// the plan declines the
// parameters (FastExecute's fallback), the packet goes to vitess too, and
// the handler, told so, sends it straight to go-mysql-server.
//
// Ordering: wireConn only intercepts a packet at the head of its buffer
// with nothing handed out before it waiting; vitess only reads again once
// it has answered everything it read, so replies keep the commands' order.

const (
	comStmtPrepare = 0x16
	comStmtExecute = 0x17
)

// execHook answers COM_STMT_EXECUTE packets of one connection.
type execHook struct {
	h  *handler
	vc *mysql.Conn

	stmts map[uint32]*execStmt
	out   []byte // the response, one write
	// passed is the statement whose packet the hook has just passed on
	// after the plan declined it: the handler skips the fast path for it.
	// 0 is none (vitess numbers statements from 1).
	passed uint32

	// prepared maps the text vitess was given to parse at COM_STMT_PREPARE
	// to the client's own text, for the handler to prepare (rewrite).
	prepared map[string]string
	// parsing is the text vitess is given to parse at the last
	// COM_STMT_PREPARE, for the words of its syntax error
	// (handler.prepareParseError); "" once taken.
	parsing string
}

// takeParsing returns the text of the prepare vitess parsed last and
// forgets it.
func (x *execHook) takeParsing() string {
	if x == nil {
		return ""
	}
	q := x.parsing
	x.parsing = ""
	return q
}

// rewrite returns a COM_STMT_PREPARE payload whose text vitess's own
// parser accepts, or nil when the client's text needs no change. vitess
// parses a prepared statement itself (to count its parameters) before the
// handler sees it, with a parser that knows neither FOR SHARE nor NOWAIT:
// `SELECT ... FOR SHARE` and `FOR UPDATE NOWAIT` failed to prepare with
// 1105 "syntax error" (the text protocol rewrites them in sqlfront's
// parser). The clause is rewritten for vitess as sqlfront rewrites it
// (LOCK IN SHARE MODE, FOR UPDATE), and the handler prepares the client's
// text, so the statement keeps its NOWAIT or SKIP LOCKED.
func (x *execHook) rewrite(pkt []byte) []byte {
	q := string(pkt[1:])
	nq := sqlfront.ParserText(q)
	x.parsing = nq
	if nq == q {
		return nil
	}
	if x.prepared == nil || len(x.prepared) >= 64 {
		x.prepared = map[string]string{}
	}
	x.prepared[nq] = q
	return append([]byte{comStmtPrepare}, nq...)
}

// original returns the client's text of a statement rewritten for vitess,
// or q itself.
func (x *execHook) original(q string) string {
	if x == nil {
		return q
	}
	if o, ok := x.prepared[q]; ok {
		delete(x.prepared, q)
		return o
	}
	return q
}

// execStmt is what the hook keeps per prepared statement: its bind
// variables, rebuilt in place on each execute.
type execStmt struct {
	bind  map[string]*querypb.BindVariable
	vars  []querypb.BindVariable
	types []querypb.Type // the parameter types of the last execute
	raw   []byte         // and as the packet sent them (type, flag pairs)
}

// execute answers the COM_STMT_EXECUTE payload pkt (command byte first)
// and reports whether it did; false means nothing was written and the
// packet must go to vitess. A write error is returned.
func (x *execHook) execute(pkt []byte) (bool, error) {
	t0 := x.h.lat.start() // stmtlatency.go: counted here only when answered here
	x.passed = 0
	x.h.settle(x.vc) // longstmt.go
	x.h.fe.BeginStatement(x.vc.ConnectionID)
	if err := x.h.fe.BeforeStatement(context.Background(), x.vc.ConnectionID); err != nil {
		return false, nil // go-mysql-server's path reports it (ComStmtExecute)
	}
	stmtID, prepare, plan, st, ok := x.parse(pkt)
	if !ok {
		return false, nil
	}
	res, handled, err := x.h.fe.Run(context.Background(), plan, st.bind)
	x.h.fe.CountProtocol(handled)
	if !handled {
		x.passed = stmtID
		return false, nil
	}
	err = x.respond(prepare.PrepareStmt, res, err)
	x.h.lat.done(prepare.PrepareStmt, t0)
	return true, err
}

// skipFast reports (once) whether the handler must not try the fast path
// for stmtID: the hook has just tried it for this packet.
func (x *execHook) skipFast(stmtID uint32) bool {
	if x == nil || x.passed == 0 || x.passed != stmtID {
		return false
	}
	x.passed = 0
	return true
}

// parse reads an execute packet into the statement's reused bind
// variables; ok is false for a packet left to the protocol layer.
func (x *execHook) parse(pkt []byte) (stmtID uint32, prepare *mysql.PrepareData, plan sqlfront.FastStmt, st *execStmt, ok bool) {
	if len(pkt) < 10 || pkt[0] != comStmtExecute {
		return
	}
	stmtID = binary.LittleEndian.Uint32(pkt[1:])
	prepare = x.vc.PrepareData[stmtID]
	if prepare == nil || len(prepare.BindVars) != 0 || pkt[5] != 0 || binary.LittleEndian.Uint32(pkt[6:]) != 1 {
		return // unknown, long data sent, a cursor, iterations
	}
	n := int(prepare.ParamsCount)
	if len(prepare.ParamsType) != n {
		return
	}
	if plan, ok = x.h.fe.FastPlanned(x.vc.ConnectionID, stmtID, prepare.PrepareStmt); !ok {
		return
	}
	ok = false
	st = x.stmt(stmtID, n)
	pos := 10
	var nulls []byte
	if n > 0 {
		nb := (n + 7) / 8
		if len(pkt) < pos+nb+1 {
			return
		}
		nulls = pkt[pos : pos+nb]
		pos += nb
		bound := pkt[pos]
		pos++
		if bound == 1 {
			if len(pkt) < pos+2*n {
				return
			}
			if raw := pkt[pos : pos+2*n]; string(raw) != string(st.raw) {
				st.raw = st.raw[:0]
				for i := 0; i < n; i++ {
					t, err := sqltypes.MySQLToType(int64(raw[2*i]), int64(raw[2*i+1])>>2)
					if err != nil {
						return
					}
					st.types[i] = t
				}
				st.raw = append(st.raw, raw...)
			}
			pos += 2 * n
		} else {
			st.raw = st.raw[:0]
			for i := 0; i < n; i++ {
				st.types[i] = querypb.Type(prepare.ParamsType[i])
			}
		}
	}
	for i := 0; i < n; i++ {
		v := &st.vars[i]
		if nulls[i/8]&(1<<uint(i%8)) != 0 {
			*v = querypb.BindVariable{Type: sqltypes.Null, Value: v.Value[:0]}
			continue
		}
		var read bool
		if pos, read = readParam(pkt, pos, st.types[i], v); !read {
			return
		}
	}
	// The types are vitess's to remember for executes that omit them.
	for i := 0; i < n; i++ {
		prepare.ParamsType[i] = int32(st.types[i])
	}
	return stmtID, prepare, plan, st, true
}

// stmt returns the reused state of statement id with n parameters.
func (x *execHook) stmt(id uint32, n int) *execStmt {
	if st := x.stmts[id]; st != nil && len(st.vars) == n {
		return st
	}
	if x.stmts == nil || len(x.stmts) >= 4096 {
		x.stmts = map[uint32]*execStmt{} // statements closed without our seeing it
	}
	st := &execStmt{bind: make(map[string]*querypb.BindVariable, n), vars: make([]querypb.BindVariable, n), types: make([]querypb.Type, n)}
	for i := range st.vars {
		st.bind["v"+strconv.Itoa(i+1)] = &st.vars[i] // vitess's names
	}
	x.stmts[id] = st
	return st
}

// readParam reads one parameter value of type t at pkt[pos:] into v as
// vitess's parseStmtArgs would render it (integers and floats as decimal
// text, strings and decimals as VARBINARY bytes), reusing v's buffer.
// Date and time types are not read (vitess formats them its own way).
func readParam(pkt []byte, pos int, t querypb.Type, v *querypb.BindVariable) (int, bool) {
	buf := v.Value[:0]
	// num sets v from a little-endian number of size bytes: sign-extended
	// to int64 when signed, read as IEEE 754 when float.
	num := func(size int, signed, float bool) (int, bool) {
		if len(pkt) < pos+size {
			return 0, false
		}
		var u uint64
		for i := size - 1; i >= 0; i-- {
			u = u<<8 | uint64(pkt[pos+i])
		}
		switch {
		case float && size == 4:
			*v = querypb.BindVariable{Type: sqltypes.Float64, Value: strconv.AppendFloat(buf, float64(math.Float32frombits(uint32(u))), 'g', -1, 64)}
		case float:
			*v = querypb.BindVariable{Type: sqltypes.Float64, Value: strconv.AppendFloat(buf, math.Float64frombits(u), 'g', -1, 64)}
		case signed:
			shift := 64 - 8*size
			*v = querypb.BindVariable{Type: sqltypes.Int64, Value: strconv.AppendInt(buf, int64(u<<shift)>>shift, 10)}
		default:
			*v = querypb.BindVariable{Type: sqltypes.Uint64, Value: strconv.AppendUint(buf, u, 10)}
		}
		return pos + size, true
	}
	switch t {
	case sqltypes.Int8:
		return num(1, true, false)
	case sqltypes.Uint8:
		return num(1, false, false)
	case sqltypes.Int16, sqltypes.Year:
		return num(2, true, false)
	case sqltypes.Uint16:
		return num(2, false, false)
	case sqltypes.Int24, sqltypes.Int32:
		return num(4, true, false)
	case sqltypes.Uint24, sqltypes.Uint32:
		return num(4, false, false)
	case sqltypes.Int64:
		return num(8, true, false)
	case sqltypes.Uint64:
		return num(8, false, false)
	case sqltypes.Float32:
		return num(4, false, true)
	case sqltypes.Float64:
		return num(8, false, true)
	case sqltypes.Decimal, sqltypes.Text, sqltypes.Blob, sqltypes.VarChar, sqltypes.Char, sqltypes.VarBinary,
		sqltypes.Bit, sqltypes.Enum, sqltypes.Set, sqltypes.Geometry, sqltypes.Binary, sqltypes.TypeJSON:
		l, p, ok := readLenEncInt(pkt, pos)
		if !ok || uint64(len(pkt)-p) < l {
			return 0, false
		}
		*v = querypb.BindVariable{Type: sqltypes.VarBinary, Value: append(buf, pkt[p:p+int(l)]...)}
		return p + int(l), true
	}
	return 0, false
}

// readLenEncInt reads a length-encoded integer at b[pos:].
func readLenEncInt(b []byte, pos int) (uint64, int, bool) {
	if pos >= len(b) {
		return 0, 0, false
	}
	switch c := b[pos]; {
	case c < 0xfb:
		return uint64(c), pos + 1, true
	case c == 0xfc && len(b) >= pos+3:
		return uint64(binary.LittleEndian.Uint16(b[pos+1:])), pos + 3, true
	case c == 0xfd && len(b) >= pos+4:
		return uint64(b[pos+1]) | uint64(b[pos+2])<<8 | uint64(b[pos+3])<<16, pos + 4, true
	case c == 0xfe && len(b) >= pos+9:
		return binary.LittleEndian.Uint64(b[pos+1:]), pos + 9, true
	}
	return 0, 0, false
}

// respond writes the result of the execute (or its error) to the client.
func (x *execHook) respond(query string, res *sqltypes.Result, err error) error {
	h, c := x.h, x.vc
	w := packetWriter{b: x.out[:0], seq: 1}
	h.syncInTrans(c)
	switch {
	case err != nil:
		var se *mysql.SQLError
		if !errors.As(h.mysqlError(c, query, err), &se) {
			se = mysql.NewSQLError(mysql.ERUnknownError, mysql.SSUnknownSQLState, "unknown error: %v", err)
		}
		w.errPacket(se)
	case len(res.Fields) == 0:
		w.okPacket(mysql.OKPacket, res.RowsAffected, res.InsertID, c.StatusFlags, h.WarningCount(c))
	default:
		deprecateEOF := c.Capabilities&mysql.CapabilityClientDeprecateEOF != 0
		w.columnCount(len(res.Fields))
		for _, f := range res.Fields {
			w.columnDefinition(f)
		}
		if !deprecateEOF {
			w.eofPacket(c.StatusFlags, 0)
		}
		for _, row := range res.Rows {
			if err := w.binaryRow(row); err != nil {
				return err // as vitess: an error in the middle of a result drops the connection
			}
		}
		h.syncInTrans(c)
		if deprecateEOF {
			w.okPacket(mysql.EOFPacket, 0, 0, c.StatusFlags, h.WarningCount(c))
		} else {
			w.eofPacket(c.StatusFlags, h.WarningCount(c))
		}
	}
	x.out = w.b
	if cap(x.out) > 1<<20 {
		x.out = nil // one large result: do not keep its buffer
	}
	_, werr := c.Conn.Write(w.b)
	return werr
}
