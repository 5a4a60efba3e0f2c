// Package checkpoint owns the checkpoint file: a consistent snapshot of the
// whole database at one log position, from which recovery starts before it
// replays the log records after that position.
//
// A checkpoint holds the position (the last sequence number it contains and
// the server's GTID set), the catalog as SQL statements that recreate it
// (databases, tables with their durable ids, definition versions and
// storage descriptors, views,
// triggers, routines, events), and every table's committed rows as they
// stand in one ReadView. It is written to a temporary file while writes go
// on, fsynced, and renamed into place: a crash during a checkpoint leaves
// the previous one current.
//
// The package owns the format only. What goes in (the ReadView, the catalog
// statements) is the caller's; so is truncating the log it covers.
//
// Format: a stream of frames, each a type byte, a uvarint length, the body
// and a CRC32C of type, length and body. The first frame is the header
// (magic, format version, sequence number, GTID text); then catalog
// statements, table starts (durable id, definition version and, from
// format version 2, the table's storage descriptor as storage.TableDesc
// encodes it), row frames (primary key, row), and a final end frame with
// the counts; from format version 3, an accounts frame (the user and grant
// tables as go-mysql-server serialises them) may come before the end
// frame; from format version 4, the header also carries the raft log
// index, term and membership a group member's checkpoint holds. Version 1
// files (no descriptors) are still read. A file without its end frame is incomplete
// and is never used.
package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

const (
	magic            = "LOCKSTEP-CKPT"
	formatVersion    = 4 // written; minFormatVersion..formatVersion are read
	minFormatVersion = 1

	frameHeader byte = 1
	frameSQL    byte = 2
	frameTable  byte = 3
	frameRow    byte = 4
	frameEnd    byte = 5
	frameAcct   byte = 6
	filePrefix       = "checkpoint-"
	fileSuffix       = ".ckpt"
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// ErrCorrupt is wrapped by every error about a damaged checkpoint file.
var ErrCorrupt = errors.New("checkpoint: corrupt file")

// Header is where a checkpoint stands.
type Header struct {
	Seq  int64  // the last sequence number the checkpoint contains
	GTID string // the executed GTID set at Seq
	// In a replication group (format version 4): the raft log index the
	// checkpoint holds every entry up to, that entry's term, and the
	// group's membership then (a raftpb.ConfState, encoded). A checkpoint
	// is the raft snapshot. Zero standalone.
	Index, Term uint64
	Conf        []byte
}

// Statement is one catalog statement: SQL run in Database.
type Statement struct {
	Database string
	SQL      string
}

// Table starts a table's rows: its durable id, definition version and
// storage descriptor (storage.TableDesc's encoding; nil in a version 1
// file). The package does not interpret the descriptor.
type Table struct {
	ID      uint64
	Version uint64
	Desc    []byte
}

// Options are a Writer's settings.
type Options struct {
	// FsyncThreshold: every this many bytes, the chunk written is sent to
	// disk and the one before it waited for and dropped from the page cache
	// (writeback). 0: the file is written to disk by the final fsync
	// only.
	FsyncThreshold int64
	// RateLimit: bytes per second the file is written at, at most (the
	// checkpoint sleeps to keep to it; pacer). 0: no limit.
	RateLimit int64
	// Stop, once closed, ends a paced checkpoint's sleeping: its writes
	// fail with ErrStopped and the caller aborts it. nil: never.
	Stop <-chan struct{}
	// Hurry, when set and true, suspends the pacing (someone is waiting for
	// the checkpoint to end: the server passes "a DDL statement waits").
	Hurry func() bool
}

// Writer writes one checkpoint file.
type Writer struct {
	dir, tmp string
	seq      int64
	f        *os.File
	wb       *writeback // the file's writes go to disk in chunks
	pace     *pacer     // above wb: the rate limit
	w        *bufio.Writer
	buf      []byte
	rows     uint64
	tables   uint64
	err      error
}

// Create starts a checkpoint at h in dir.
func Create(dir string, h Header, o Options) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, err
	}
	tmp := filepath.Join(dir, fmt.Sprintf("%s%020d%s.tmp", filePrefix, h.Seq, fileSuffix))
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o640)
	if err != nil {
		return nil, err
	}
	wb := newWriteback(f, o.FsyncThreshold)
	pc := newPacer(wb, o)
	w := &Writer{dir: dir, tmp: tmp, seq: h.Seq, f: f, wb: wb, pace: pc, w: bufio.NewWriterSize(pc, 1<<20)}
	b := append([]byte(magic), formatVersion)
	b = binary.AppendUvarint(b, uint64(h.Seq))
	b = appendString(b, h.GTID)
	b = binary.AppendUvarint(b, h.Index)
	b = binary.AppendUvarint(b, h.Term)
	b = appendString(b, string(h.Conf))
	w.frame(frameHeader, b)
	return w, w.err
}

// SQL adds a catalog statement.
func (w *Writer) SQL(s Statement) error {
	b := appendString(w.buf[:0], s.Database)
	w.buf = appendString(b, s.SQL)
	w.frame(frameSQL, w.buf)
	return w.err
}

// Table starts table t; the rows that follow belong to it.
func (w *Writer) Table(t Table) error {
	b := binary.AppendUvarint(w.buf[:0], t.ID)
	b = binary.AppendUvarint(b, t.Version)
	w.buf = appendString(b, string(t.Desc))
	w.tables++
	w.frame(frameTable, w.buf)
	return w.err
}

// Row adds a row of the current table.
func (w *Writer) Row(pk, row []byte) error {
	b := binary.AppendUvarint(w.buf[:0], uint64(len(pk)))
	b = append(b, pk...)
	w.buf = append(b, row...)
	w.rows++
	w.frame(frameRow, w.buf)
	return w.err
}

// Accounts adds the accounts: the user and grant tables, serialised (the
// package does not interpret them).
func (w *Writer) Accounts(data []byte) error {
	w.frame(frameAcct, data)
	return w.err
}

// Commit writes the end frame, fsyncs, and renames the file into place
// (fsyncing the directory). It returns the final path.
func (w *Writer) Commit() (string, error) {
	b := binary.AppendUvarint(w.buf[:0], w.tables)
	b = binary.AppendUvarint(b, w.rows)
	w.frame(frameEnd, b)
	if w.err == nil {
		w.err = w.w.Flush()
	}
	if w.err == nil {
		w.err = w.f.Sync()
	}
	if w.err == nil && w.wb.threshold > 0 {
		dropCache(w.f) // clean now: the file is read again only at a restart
	}
	if cerr := w.f.Close(); w.err == nil {
		w.err = cerr
	}
	if w.err != nil {
		os.Remove(w.tmp)
		return "", w.err
	}
	final := strings.TrimSuffix(w.tmp, ".tmp")
	if err := os.Rename(w.tmp, final); err != nil {
		return "", err
	}
	return final, syncDir(w.dir)
}

// Bytes returns how many bytes have reached the file so far (the buffer
// not yet flushed is not counted).
func (w *Writer) Bytes() int64 { return w.wb.off }

// Chunks returns how many chunks the writeback has sent to disk before the
// final fsync.
func (w *Writer) Chunks() int64 { return w.wb.chunks }

// Paused returns how long the writer has slept to keep to its rate limit.
func (w *Writer) Paused() time.Duration { return w.pace.paused }

// Abort abandons the checkpoint.
func (w *Writer) Abort() {
	w.f.Close()
	os.Remove(w.tmp)
}

func (w *Writer) frame(typ byte, body []byte) {
	if w.err != nil {
		return
	}
	var hdr [1 + binary.MaxVarintLen64]byte
	hdr[0] = typ
	n := 1 + binary.PutUvarint(hdr[1:], uint64(len(body)))
	crc := crc32.Update(crc32.Update(0, crcTable, hdr[:n]), crcTable, body)
	var c [4]byte
	binary.LittleEndian.PutUint32(c[:], crc)
	for _, p := range [][]byte{hdr[:n], body, c[:]} {
		if _, err := w.w.Write(p); err != nil {
			w.err = err
			return
		}
	}
}

// Visitor receives a checkpoint's content in file order.
type Visitor struct {
	SQL   func(Statement) error
	Table func(Table) error
	Row   func(pk, row []byte) error // pk and row are valid only during the call
	// Accounts receives the accounts frame; data is valid only during the
	// call.
	Accounts func(data []byte) error
}

// Latest returns the path of the newest complete checkpoint in dir, or ""
// when there is none. Leftover temporary files are removed.
func Latest(dir string) (string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	var names []string
	for _, e := range ents {
		n := e.Name()
		switch {
		case strings.HasPrefix(n, filePrefix) && strings.HasSuffix(n, fileSuffix+".tmp"):
			os.Remove(filepath.Join(dir, n))
		case strings.HasPrefix(n, filePrefix) && strings.HasSuffix(n, fileSuffix):
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "", nil
	}
	sort.Strings(names) // zero-padded sequence numbers sort numerically
	return filepath.Join(dir, names[len(names)-1]), nil
}

// Remove deletes the complete checkpoints in dir older than keep (a path
// Latest returned).
func RemoveOlder(dir, keep string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, filePrefix) && strings.HasSuffix(n, fileSuffix) && n < filepath.Base(keep) {
			if err := os.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// SeqOf returns the sequence number in a checkpoint file's name.
func SeqOf(path string) (int64, bool) {
	n := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), filePrefix), fileSuffix)
	v, err := strconv.ParseInt(n, 10, 64)
	return v, err == nil
}

// Read reads the checkpoint at path, calling v for its content, and returns
// its header. The whole file is verified: a bad checksum, a missing end
// frame or counts that do not match are errors wrapping ErrCorrupt, naming
// the file and offset.
func Read(path string, v Visitor) (Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return Header{}, err
	}
	defer f.Close()
	return read(&reader{r: bufio.NewReaderSize(f, 1<<20), path: path}, v)
}

// ReadData is Read of a checkpoint held in memory (a file's bytes); name
// stands for the file in errors.
func ReadData(data []byte, name string, v Visitor) (Header, error) {
	return read(&reader{r: bufio.NewReaderSize(bytes.NewReader(data), 64<<10), path: name}, v)
}

func read(r *reader, v Visitor) (Header, error) {
	var h Header
	typ, body, err := r.next()
	if err != nil {
		return h, err
	}
	if typ != frameHeader || len(body) < len(magic)+1 || string(body[:len(magic)]) != magic {
		return h, r.corrupt("not a lockstep checkpoint")
	}
	version := body[len(magic)]
	if version < minFormatVersion || version > formatVersion {
		return h, fmt.Errorf("checkpoint %s: format version %d is not supported by this binary (%d-%d)", r.path, version, minFormatVersion, formatVersion)
	}
	d := body[len(magic)+1:]
	seq, d, ok := uvarint(d)
	gtid, d, ok2 := str(d)
	h = Header{Seq: int64(seq), GTID: gtid}
	if ok && ok2 && version >= 4 {
		var ok3, ok4, ok5 bool
		var conf string
		h.Index, d, ok3 = uvarint(d)
		h.Term, d, ok4 = uvarint(d)
		conf, d, ok5 = str(d)
		ok = ok3 && ok4 && ok5
		if len(conf) > 0 {
			h.Conf = []byte(conf)
		}
	}
	if !ok || !ok2 || len(d) != 0 {
		return Header{}, r.corrupt("bad header")
	}
	var tables, rows uint64
	for {
		typ, body, err := r.next()
		if err == io.EOF {
			return h, r.corrupt("no end frame (incomplete checkpoint)")
		}
		if err != nil {
			return h, err
		}
		switch typ {
		case frameSQL:
			db, rest, ok := str(body)
			q, rest, ok2 := str(rest)
			if !ok || !ok2 || len(rest) != 0 {
				return h, r.corrupt("bad statement frame")
			}
			if v.SQL != nil {
				if err := v.SQL(Statement{Database: db, SQL: q}); err != nil {
					return h, err
				}
			}
		case frameTable:
			id, rest, ok := uvarint(body)
			ver, rest, ok2 := uvarint(rest)
			var desc []byte
			if version >= 2 && ok && ok2 {
				var d string
				d, rest, ok = str(rest)
				if d != "" {
					desc = []byte(d)
				}
			}
			if !ok || !ok2 || len(rest) != 0 {
				return h, r.corrupt("bad table frame")
			}
			tables++
			if v.Table != nil {
				if err := v.Table(Table{ID: id, Version: ver, Desc: desc}); err != nil {
					return h, err
				}
			}
		case frameRow:
			n, rest, ok := uvarint(body)
			if !ok || n > uint64(len(rest)) {
				return h, r.corrupt("bad row frame")
			}
			rows++
			if v.Row != nil {
				if err := v.Row(rest[:n], rest[n:]); err != nil {
					return h, err
				}
			}
		case frameAcct:
			if version < 3 {
				return h, r.corrupt("accounts frame in a version " + strconv.Itoa(int(version)) + " file")
			}
			if v.Accounts != nil {
				if err := v.Accounts(body); err != nil {
					return h, err
				}
			}
		case frameEnd:
			nt, rest, ok := uvarint(body)
			nr, rest, ok2 := uvarint(rest)
			if !ok || !ok2 || len(rest) != 0 || nt != tables || nr != rows {
				return h, r.corrupt("end frame counts do not match")
			}
			return h, nil
		default:
			return h, r.corrupt(fmt.Sprintf("unknown frame type %d", typ))
		}
	}
}

type reader struct {
	r    *bufio.Reader
	path string
	off  int64
	buf  []byte
}

func (r *reader) corrupt(what string) error {
	return fmt.Errorf("%w: %s offset %d: %s", ErrCorrupt, r.path, r.off, what)
}

func (r *reader) next() (byte, []byte, error) {
	typ, err := r.r.ReadByte()
	if err == io.EOF {
		return 0, nil, io.EOF
	}
	if err != nil {
		return 0, nil, err
	}
	n, err := binary.ReadUvarint(r.r)
	if err != nil || n > 1<<31 {
		return 0, nil, r.corrupt("bad frame length")
	}
	if cap(r.buf) < int(n)+4 {
		r.buf = make([]byte, int(n)+4)
	}
	b := r.buf[:int(n)+4]
	if _, err := io.ReadFull(r.r, b); err != nil {
		return 0, nil, r.corrupt("truncated frame")
	}
	var hdr [1 + binary.MaxVarintLen64]byte
	hdr[0] = typ
	hn := 1 + binary.PutUvarint(hdr[1:], n)
	crc := crc32.Update(crc32.Update(0, crcTable, hdr[:hn]), crcTable, b[:n])
	if crc != binary.LittleEndian.Uint32(b[n:]) {
		return 0, nil, r.corrupt("checksum mismatch")
	}
	r.off += int64(hn) + int64(n) + 4
	return typ, b[:n], nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func uvarint(b []byte) (uint64, []byte, bool) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, nil, false
	}
	return v, b[n:], true
}

func str(b []byte) (string, []byte, bool) {
	n, rest, ok := uvarint(b)
	if !ok || n > uint64(len(rest)) {
		return "", nil, false
	}
	return string(rest[:n]), rest[n:], true
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// InstallFile moves a checkpoint file received into a file of its own (a
// group member's raft snapshot, streamed: src, on dir's file system) into
// dir, after verifying it through Read. It returns the file's path; src
// is gone when it succeeds.
func InstallFile(dir, src string) (string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	h, err := Read(src, Visitor{})
	if err != nil {
		return "", fmt.Errorf("checkpoint: the received checkpoint: %w", err)
	}
	final := filepath.Join(dir, fmt.Sprintf("%s%020d%s", filePrefix, h.Seq, fileSuffix))
	if err := os.Rename(src, final); err != nil {
		return "", err
	}
	if err := syncDir(dir); err != nil {
		return "", err
	}
	return final, RemoveOlder(dir, final)
}

// Install writes a checkpoint file received whole (a group member's raft
// snapshot) into dir, after verifying it: a temporary file, fsynced, then
// installed as InstallFile installs one.
func Install(dir string, data []byte) (string, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return "", err
	}
	tmp := filepath.Join(dir, filePrefix+"install"+fileSuffix+".tmp")
	if err := os.WriteFile(tmp, data, 0o640); err != nil {
		return "", err
	}
	f, err := os.Open(tmp)
	if err == nil {
		err = f.Sync()
		f.Close()
	}
	if err != nil {
		os.Remove(tmp)
		return "", err
	}
	path, err := InstallFile(dir, tmp)
	if path == "" {
		os.Remove(tmp) // not installed
	}
	return path, err
}
