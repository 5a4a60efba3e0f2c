// Package errlog keeps the distinct error messages a benchmark client met
// and how often each occurred: the first MaxDistinct messages, then one
// line counting the rest. Shared by `lockstep bench tpcc` (internal/bench)
// and `lockstep bench oltp` (internal/bench/oltp).
package errlog

import "sync"

// MaxDistinct is how many distinct messages a Log keeps.
const MaxDistinct = 20

// overflow stands for the messages after the first MaxDistinct.
const overflow = "(further distinct errors not kept)"

// Count is one distinct error message and how often it occurred.
type Count struct {
	Message string `json:"message"`
	Count   int64  `json:"count"`
}

// Log counts error messages; safe for concurrent use. The zero value is
// ready.
type Log struct {
	mu     sync.Mutex
	counts map[string]int64
	order  []string
}

// Add counts one occurrence of msg.
func (e *Log) Add(msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = map[string]int64{}
	}
	if _, ok := e.counts[msg]; !ok {
		if len(e.order) >= MaxDistinct {
			msg = overflow
			if _, ok := e.counts[msg]; !ok {
				e.order = append(e.order, msg)
			}
		} else {
			e.order = append(e.order, msg)
		}
	}
	e.counts[msg]++
}

// List returns the messages in the order they were first seen.
func (e *Log) List() []Count {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Count, 0, len(e.order))
	for _, m := range e.order {
		out = append(out, Count{m, e.counts[m]})
	}
	return out
}
