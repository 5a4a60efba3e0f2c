package commit

import (
	"fmt"

	"lockstep/internal/certify"
)

// Rebase starts the pipeline's numbering again at nextSeq and nextGNO,
// with a new certifier whose history begins there (every transaction after
// depends at least on nextSeq-1), and a chain of groups broken by
// ErrNotCommitted starts again. A group member that has just become the
// primary calls it: the transactions it applied from other primaries
// advanced the numbers without passing through its pipeline. It waits for
// every group in flight to publish first. Numbers must not go back: a
// nextSeq at or below a sequence number this pipeline published is refused.
func (p *Pipeline) Rebase(nextSeq, nextGNO int64) error {
	if nextSeq < 1 || nextGNO < 1 {
		return fmt.Errorf("commit: rebase to sequence number %d, GNO %d: both must be >= 1", nextSeq, nextGNO)
	}
	for range cap(p.syncSlots) {
		p.syncSlots <- struct{}{}
	}
	defer func() {
		for range cap(p.syncSlots) {
			<-p.syncSlots
		}
	}()
	p.logMu.Lock()
	defer p.logMu.Unlock()
	p.commitMu.Lock()
	defer p.commitMu.Unlock()
	if last := p.c.lastSeq.Load(); nextSeq <= last {
		return fmt.Errorf("commit: rebase to sequence number %d, but %d is published", nextSeq, last)
	}
	cfg := certify.DefaultConfig()
	cfg.Base = nextSeq - 1
	cert, err := certify.NewStatic(cfg)
	if err != nil {
		return err
	}
	var c certify.Certifier = cert
	p.cert.Store(&c)
	p.seq = newSequencer(cert, nextSeq)
	p.seq.gnoOffset = nextGNO - nextSeq
	p.gnoOffset.Store(p.seq.gnoOffset)
	p.c.lastSeq.Store(nextSeq - 1)
	p.chainErr = nil // a chain broken by ErrNotCommitted starts again here
	return nil
}

// LastPublished is the sequence number of the last transaction published.
func (p *Pipeline) LastPublished() int64 { return p.c.lastSeq.Load() }

// WaitPublished waits until every transaction up to seq is published, the
// pipeline fails (its error), or stop is closed (ErrClosed). A group
// member's applier waits so for the primary's own transactions. While
// nobody waits, publishing pays one atomic load for it.
func (p *Pipeline) WaitPublished(seq int64, stop <-chan struct{}) error {
	p.pubWaiters.Add(1)
	defer p.pubWaiters.Add(-1)
	for {
		ch := *p.pubCh.Load()
		if p.LastPublished() >= seq {
			return nil
		}
		if err := p.Err(); err != nil {
			return err
		}
		select {
		case <-ch:
		case <-stop:
			return ErrClosed
		}
	}
}

// notifyPublished wakes WaitPublished's waiters (after lastSeq moved or the
// pipeline failed).
func (p *Pipeline) notifyPublished() {
	if p.pubWaiters.Load() == 0 {
		return
	}
	next := make(chan struct{})
	close(*p.pubCh.Swap(&next))
}
