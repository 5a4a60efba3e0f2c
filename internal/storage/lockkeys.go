package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/shopspring/decimal"

	"lockstep/internal/storage/rowenc"
	"lockstep/internal/storage/slab"
)

// Lock keys as people read them (performance_schema.data_locks; docs/
// storage.md, "Seeing locks"). A lock key is table id (4 bytes), a tag
// (2 bytes: index number + 1, with gapTag for a gap lock and supTag for
// the supremum) and the index's entry key (or, for the locks a unique
// check takes, the index key alone). Keys are memcomparable and not
// reversible in general (a collated string's key is its weights), so the
// values are read from the row the entry names, as InnoDB prints them
// from the record.

// LockKeyInfo says what a lock key locks.
type LockKeyInfo struct {
	Table     *Table
	Index     int    // PrimaryIndex or a secondary index number
	IndexName string // PRIMARY, GEN_CLUST_INDEX (no declared primary key) or the index's name
	Gap       bool   // a gap lock key: the gap before the entry (or the supremum)
	Supremum  bool   // the gap after the index's last entry
	// Entry is the entry's record lock key: the key without its gap and
	// supremum flags (a record lock key and the gap lock key of the same
	// entry have the same Entry).
	Entry string
	// Data is the locked entry's values as InnoDB's LOCK_DATA prints
	// them: the index columns, then the primary key columns for a
	// secondary index entry, ", "-separated; "supremum pseudo-record" for
	// the supremum. HasData is false when the entry is gone (its gap lock
	// outlived it) or cannot be shown (the hidden content index).
	Data    string
	HasData bool
}

// DescribeLockKey names a lock key of a live table of the engine; false
// for a key it did not make or a table dropped since. It takes the
// table's read latch briefly.
func (e *Engine) DescribeLockKey(key string) (LockKeyInfo, bool) {
	if len(key) < 6 {
		return LockKeyInfo{}, false
	}
	id := binary.BigEndian.Uint32([]byte(key[:4]))
	tag := binary.BigEndian.Uint16([]byte(key[4:6]))
	t, _ := e.TableByID(uint64(id))
	if t == nil {
		return LockKeyInfo{}, false
	}
	info := LockKeyInfo{
		Table:    t,
		Index:    int(tag&^(gapTag|supTag)) - 1,
		Gap:      tag&gapTag != 0,
		Supremum: tag&supTag != 0,
		Entry:    key[:4] + string([]byte{byte(tag >> 8 &^ ((gapTag | supTag) >> 8)), byte(tag)}) + key[6:],
	}
	kb := []byte(key[6:])
	t.mu.RLock()
	defer t.mu.RUnlock()
	switch {
	case info.Index == PrimaryIndex && len(t.pkParts) == 0:
		info.IndexName = "GEN_CLUST_INDEX"
	case info.Index == PrimaryIndex:
		info.IndexName = "PRIMARY"
	case info.Index >= 0 && info.Index < len(t.secs):
		info.IndexName = t.secs[info.Index].ix.Name
	default:
		return LockKeyInfo{}, false // an index dropped since
	}
	if info.Supremum {
		info.Data, info.HasData = "supremum pseudo-record", true
		return info, true
	}
	info.Data, info.HasData = t.lockDataLocked(info.Index, kb)
	return info, true
}

// lockDataLocked formats the entry kb of index idx. Caller holds t.mu.
func (t *Table) lockDataLocked(idx int, kb []byte) (string, bool) {
	var vals []string
	if idx == PrimaryIndex {
		slot, ok := t.get(kb)
		if !ok {
			return "", false
		}
		return t.pkValues(vals, t.pkOf(slot), t.newestRow(slot, nil))
	}
	s := t.secs[idx]
	if s.ix.Content {
		return "", false
	}
	var loc slab.Loc
	found := false
	s.tree.Ascend(kb, func(ref uint64) bool {
		loc, found = slab.Loc(ref), bytes.HasPrefix(t.item(slab.Loc(ref)), kb)
		return false
	})
	if !found {
		return "", false
	}
	ek, slot := t.entryAt(loc)
	ikey := ek[:len(ek)-len(t.pkOf(slot))]
	// The version the entry was made from: the newest whose index key is
	// the entry's (a later update may have moved the row off it).
	row := t.newestRow(slot, func(row []byte) bool {
		k, _, err := s.key(row)
		return err == nil && bytes.Equal(k, ikey)
	})
	if row == nil {
		return "", false
	}
	vals, ok := appendKeyValues(vals, row, s.ix.Parts)
	if !ok {
		return "", false
	}
	if len(kb) == len(ikey) {
		return strings.Join(vals, ", "), true // a unique check's lock: the index key alone
	}
	return t.pkValues(vals, t.pkOf(slot), row)
}

// pkValues appends the primary key pk (row its values) to vals and joins
// them.
func (t *Table) pkValues(vals []string, pk []byte, row []byte) (string, bool) {
	if len(t.pkParts) == 0 {
		// A hidden row id, printed as InnoDB prints DB_ROW_ID.
		if len(pk) != 8 {
			return "", false
		}
		vals = append(vals, fmt.Sprintf("0x%012X", binary.BigEndian.Uint64(pk)^(1<<63)))
		return strings.Join(vals, ", "), true
	}
	if row == nil {
		return "", false
	}
	vals, ok := appendKeyValues(vals, row, t.pkParts)
	return strings.Join(vals, ", "), ok
}

// newestRow returns the newest row of slot s's versions that is not a
// delete and passes keep (nil: any). Caller holds t.mu.
func (t *Table) newestRow(s uint32, keep func([]byte) bool) []byte {
	w := t.walk(s)
	for v := w.next(); v != nil; v = w.next() {
		if v.row != nil && (keep == nil || keep(v.row)) {
			return v.row
		}
	}
	return nil
}

// appendKeyValues appends the formatted values of row's key parts.
func appendKeyValues(vals []string, row []byte, parts []KeyPart) ([]string, bool) {
	n := 0
	for _, p := range parts {
		n = max(n, p.Column+1)
	}
	cols, err := rowenc.DecodeRow(row, n)
	if err != nil {
		return vals, false
	}
	for _, p := range parts {
		if p.Column >= len(cols) {
			return vals, false
		}
		vals = append(vals, lockDataValue(cols[p.Column], p.Prefix))
	}
	return vals, true
}

// lockDataValue prints one key value as LOCK_DATA does: numbers as
// numbers, strings quoted (cut to an index prefix), binary strings in
// hex, NULL as NULL.
func lockDataValue(v any, prefix int) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		if prefix > 0 && utf8.RuneCountInString(x) > prefix {
			x = string([]rune(x)[:prefix])
		}
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	case []byte:
		if prefix > 0 && len(x) > prefix {
			x = x[:prefix]
		}
		return "0x" + strings.ToUpper(hex.EncodeToString(x))
	case int8, int16, int32, int64, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	case decimal.Decimal:
		return x.String()
	case time.Time:
		if x.Nanosecond() != 0 {
			return "'" + x.Format("2006-01-02 15:04:05.999999") + "'"
		}
		return "'" + x.Format("2006-01-02 15:04:05") + "'"
	}
	return fmt.Sprint(v)
}
