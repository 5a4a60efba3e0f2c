package sqlfront

import (
	"lockstep/internal/storage"
	"lockstep/internal/storage/rowenc"
	"lockstep/internal/txn"
)

// explainSampleRows bounds the rows keyRows reads for one estimate.
const explainSampleRows = 100_000

// keyStat names one estimate: an index and how many of its leading
// columns a lookup fixes.
type keyStat struct {
	ix *index
	k  int
}

// keyRows is the rows a lookup that fixes the first k columns of ix to
// values known only when it runs (a lookup join's probe, a correlated
// subquery's lookup by the outer row) reads: the table's rows per distinct
// value of those k columns — InnoDB's records-per-key statistic, which
// MariaDB's EXPLAIN shows for such a ref — over the table's first
// explainSampleRows rows. Rows with a NULL among the k columns are left
// out (an equality never finds them). ok is false when it cannot count.
func (w *explainWalk) keyRows(t *Table, ix *index, k int) (rows uint64, ok bool) {
	st := keyStat{ix, k}
	if n, seen := w.keyStats[st]; seen {
		return n, true
	}
	if t == nil || ix == nil || t.db == nil || t.db.fe == nil || t.db.fe.store == nil || k <= 0 || k > len(ix.codec.enc) {
		return 0, false
	}
	ncols := len(ix.t.schema.Schema)
	enc := ix.codec.enc[:k]
	distinct := map[string]struct{}{}
	var sampled uint64
	var key []byte
	tx := t.db.fe.store.Begin(txn.ReadCommitted)
	defer tx.Rollback()
	err := tx.Scan(w.ctx, t.entry.store, storage.PrimaryIndex, storage.Range{}, false, 0, func(_, b []byte) (bool, error) {
		row, err := decodeRow(b, ncols)
		if err != nil {
			return false, err
		}
		var hasNull bool
		key, hasNull, err = rowenc.AppendKey(key[:0], enc, row)
		if err != nil {
			return false, err
		}
		if !hasNull {
			sampled++
			if _, dup := distinct[string(key)]; !dup {
				distinct[string(key)] = struct{}{}
			}
		}
		return sampled < explainSampleRows, nil
	})
	if err != nil || len(distinct) == 0 {
		return 0, false
	}
	rows = (sampled + uint64(len(distinct)) - 1) / uint64(len(distinct))
	if w.keyStats == nil {
		w.keyStats = map[keyStat]uint64{}
	}
	w.keyStats[st] = rows
	return rows, true
}
