package cluster

import (
	"sync"
	"time"
)

// Runtime runs a Node's steps on goroutines of their own — the raft step,
// the append step (write, then fsync and answer, taking everything queued
// meanwhile as one batch) and the apply step — and ticks its clock.
type Runtime struct {
	n    *Node
	stop chan struct{}
	wg   sync.WaitGroup
}

// Start runs n's steps until Stop, ticking every tick.
func Start(n *Node, tick time.Duration) *Runtime {
	r := &Runtime{n: n, stop: make(chan struct{})}
	loop := func(wakeC chan struct{}, step func() bool) {
		defer r.wg.Done()
		for {
			select {
			case <-r.stop:
				return
			case <-wakeC:
			}
			for step() {
				select {
				case <-r.stop:
					return
				default:
				}
			}
		}
	}
	r.wg.Add(4)
	go loop(n.wakeRaft, n.RaftStep)
	go loop(n.wakeAppend, func() bool {
		w := n.AppendWrite()
		s := n.AppendSync()
		return w || s
	})
	go loop(n.wakeApply, n.ApplyStep)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
				n.Tick()
			}
		}
	}()
	return r
}

// Stop stops the goroutines, then the node (pending proposals end with
// ErrStopped). The storage stays open.
func (r *Runtime) Stop() {
	close(r.stop)
	r.wg.Wait()
	r.n.Stop()
}
