package record

// lazyChanges are a transaction's changes left encoded (DecodeTxnChunked):
// b starts at the first change, n changes, decoded chunk at a time.
type lazyChanges struct {
	b     []byte
	n     int
	chunk int
	// open: the changes are read from a stream (StreamEntry), not b;
	// maxBytes is the largest change's bytes.
	open     Opener
	maxBytes uint64
}

// NumChanges returns how many changes the transaction has, decoded or not.
func (t *Txn) NumChanges() int {
	if t.lazy != nil {
		return t.lazy.n
	}
	return len(t.Changes)
}

// Chunked reports whether the changes were left encoded
// (DecodeTxnChunked): Changes is nil and ChangeChunks decodes them.
func (t *Txn) Chunked() bool { return t.lazy != nil }

// ChangeChunks calls f with the transaction's changes, in order: Changes
// in one call when they are decoded, otherwise chunk by chunk, each
// decoded into the same buffer (f must not keep the slice; the byte
// slices in it alias the record, as DecodeTxn's do). It stops at f's
// first error and returns it.
func (t *Txn) ChangeChunks(f func([]Change) error) error {
	if t.lazy == nil {
		if len(t.Changes) == 0 {
			return nil
		}
		return f(t.Changes)
	}
	z := t.lazy
	if z.open != nil {
		return t.streamChunks(f)
	}
	buf := make([]Change, min(z.chunk, z.n))
	d := decoder{b: z.b}
	for done := 0; done < z.n; {
		k := min(len(buf), z.n-done)
		for i := 0; i < k; i++ {
			d.change(&buf[i], t.Minimal)
		}
		if d.err != nil {
			return d.err // DecodeTxnChunked checked them: not reached
		}
		if err := f(buf[:k]); err != nil {
			return err
		}
		done += k
	}
	return nil
}
