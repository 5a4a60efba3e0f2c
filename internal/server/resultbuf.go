package server

import "github.com/dolthub/vitess/go/mysql"

// Bounded memory for large results.
//
// go-mysql-server turns each row into wire bytes inside one buffer per
// statement and hands them to the protocol layer in batches. It means to
// reset the buffer after each batch is written, but its condition is
// inverted: it resets only while a server-side cursor exists, the one case
// where the bytes must stay. So every row of a result stayed in memory
// until the statement ended, in a buffer grown by doubling: a 2 GB result
// took the server from 0.7 to 4.5 GB (issue 29, item 5).
//
// The condition reads the connection's status flags before each batch is
// written. resultStream sets SERVER_STATUS_CURSOR_EXISTS between batches,
// when nothing is being written, so the next batch is reset once written,
// and clears it while a batch is being written (a packet may carry the
// flags) and when the statement ends, before its final OK or EOF. A
// connection with a real cursor is left alone.
type resultStream struct {
	c   *mysql.Conn
	set bool // the flag is ours
}

const cursorExists = uint16(mysql.ServerCursorExists)

// writing clears our flag before a batch is written.
func (rs *resultStream) writing() {
	if rs.set {
		rs.c.StatusFlags &^= cursorExists
		rs.set = false
	}
}

// written sets the flag once a batch is written, unless a real cursor set
// it.
func (rs *resultStream) written() {
	if rs.c.StatusFlags&cursorExists == 0 {
		rs.c.StatusFlags |= cursorExists
		rs.set = true
	}
}

// end clears our flag when the statement's results are over.
func (rs *resultStream) end() { rs.writing() }

// batch wraps the writing of one batch.
func (rs *resultStream) batch(send func() error) error {
	rs.writing()
	err := send()
	rs.written()
	return err
}
