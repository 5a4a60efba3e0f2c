package apply

import (
	"errors"
	"fmt"
	"time"
)

// Transient marks an executor's error as transient: the step failed
// because of something that passes (a local reader's row lock, a lock
// wait timeout, a deadlock victim) and left nothing of itself behind, so
// the driver tries it again (RetryPolicy). Any other error is permanent
// and stops the applier.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return transientError{err}
}

type transientError struct{ err error }

func (e transientError) Error() string   { return e.err.Error() }
func (e transientError) Unwrap() error   { return e.err }
func (e transientError) Transient() bool { return true }

// IsTransient reports whether err, or an error it wraps, has a
// Transient() method returning true (Transient's errors have; another
// package may mark its own errors without importing this one).
func IsTransient(err error) bool {
	var t interface{ Transient() bool }
	return errors.As(err, &t) && t.Transient()
}

// RetryPolicy is how a driver retries a step whose executor error is
// transient: up to Retries times, pausing Backoff before the first retry
// and twice as long before each next one, at most MaxBackoff.
type RetryPolicy struct {
	// Retries (MySQL's replica_transaction_retries, 10 by default there
	// and here): how many times a step is tried again. 0: the default;
	// negative: never retried.
	Retries int
	// Backoff is the first pause (default 1 ms); MaxBackoff caps the
	// pauses (default 1 s).
	Backoff, MaxBackoff time.Duration
	// Sleep pauses (default time.Sleep; tests inject their own).
	Sleep func(time.Duration)
}

// Defaults of RetryPolicy.
const (
	DefaultRetries    = 10
	DefaultBackoff    = time.Millisecond
	DefaultMaxBackoff = time.Second
)

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.Retries == 0 {
		p.Retries = DefaultRetries
	}
	if p.Backoff <= 0 {
		p.Backoff = DefaultBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = DefaultMaxBackoff
	}
	p.MaxBackoff = max(p.MaxBackoff, p.Backoff)
	if p.Sleep == nil {
		p.Sleep = time.Sleep
	}
	return p
}

// do runs f until it succeeds, fails with an error that is not transient,
// or has failed transiently Retries+1 times. Before each retry it calls
// retrying (the driver counts the retry; false: the applier stopped, give
// up now) and pauses.
func (p RetryPolicy) do(f func() error, retrying func() bool) error {
	pause := p.Backoff
	for n := 0; ; n++ {
		err := f()
		if err == nil || !IsTransient(err) {
			return err
		}
		if n >= p.Retries {
			return fmt.Errorf("%w (a transient error, retried %d times: replica_transaction_retries)", err, n)
		}
		if !retrying() {
			return err
		}
		p.Sleep(pause)
		pause = min(2*pause, p.MaxBackoff)
	}
}
