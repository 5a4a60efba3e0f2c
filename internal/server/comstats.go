package server

import (
	"fmt"
	"time"
)

// COM_STATISTICS (`mysqladmin status`, the mysql CLI's `status`) is a
// command the protocol layer does not know: it answered "command handling
// not implemented yet: 9". wireConn (wireconn.go) answers it itself, below
// the protocol layer: a one-byte command packet 0x09 gets the statistics
// line MySQL sends. A COM_STATISTICS that arrives while earlier bytes are
// still waiting to be read (a pipelining client) waits until they have
// been, so replies keep the commands' order.

const comStatistics = 0x09

// reply writes the statistics line as the command's one response packet
// (sequence 1, a bare string as MySQL sends it).
func (c *wireConn) reply() error {
	_, err := c.conn().Write(packetOf(1, []byte(c.answer())))
	return err
}

// statisticsLine is MySQL's COM_STATISTICS text.
func statisticsLine(started time.Time, threads, questions int64) string {
	up := int64(time.Since(started).Seconds())
	qps := 0.0
	if up > 0 {
		qps = float64(questions) / float64(up)
	}
	return fmt.Sprintf("Uptime: %d  Threads: %d  Questions: %d  Slow queries: 0  Opens: 0  Flush tables: 1  Open tables: 0  Queries per second avg: %.3f",
		up, threads, questions, qps)
}
