package server

import (
	"encoding/binary"
	"testing"
)

// TestFailedPrepareHasNoStatement: a COM_STMT_PREPARE that fails (here
// for a table that does not exist; the same path as one KILL stopped)
// leaves no statement id behind. vitess registered the statement before
// the handler prepared it, so an execute of the next id ran the text once
// the table existed; MySQL allocates no id and answers 1243.
func TestFailedPrepareHasNoStatement(t *testing.T) {
	ft := startFuzzTarget(t)
	c := loginRaw(t, ft.addr)
	_ = c.command(append([]byte{0x16}, "SELECT a FROM d.later"...))
	c.expect(t, "COM_STMT_PREPARE of a missing table", 1146)
	_ = c.command(append([]byte{0x03}, "CREATE TABLE d.later (a INT)"...))
	c.expect(t, "CREATE TABLE", "OK")
	exec := binary.LittleEndian.AppendUint32([]byte{0x17}, 1) // vitess's first id
	exec = append(exec, 0)
	exec = binary.LittleEndian.AppendUint32(exec, 1)
	_ = c.command(exec)
	c.expect(t, "COM_STMT_EXECUTE of the statement that failed to prepare", 1243)
	_ = c.command([]byte{0x0e})
	c.expect(t, "COM_PING", "OK")
}
