package txlog

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"strconv"
	"strings"
)

// formatVersion is the segment format this binary writes and the newest it
// reads. Version 1 segments (a 32-byte header without the log id) are
// still read; the writer moves to a new (version 2) segment before it
// appends to one.
const formatVersion = 2

// Segment header, version 2, 64 bytes:
//
//	 0  magic      [8]byte "LKSTPLOG"
//	 8  version    u16
//	10  flags      u16 (segReset)
//	12  first      u64 index of the first record the segment holds
//	20  prevTerm   u64 term of record first-1 (0 if unknown)
//	28  logID      [16]byte the log's identity (log.state has it too)
//	44  reserved   [16]byte zeros
//	60  crc        u32 CRC32C of bytes 0..60
//
// Version 1 (32 bytes) has no logID and its crc is at 28, over 0..28.
//
// Record header, 32 bytes, followed by the payload:
//
//	 0  length     u32 stored payload length
//	 4  flags      u32 (recZstd)
//	 8  term       u64
//	16  index      u64
//	24  payloadCRC u32 CRC32C of the stored payload
//	28  headerCRC  u32 CRC32C of bytes 0..28
//
// All integers little-endian. Records follow each other with no padding.
const (
	segHeaderSize   = 64 // version 2, what this binary writes
	segHeaderSizeV1 = 32
	recHeaderSize   = 32
	segMagic        = "LKSTPLOG"

	// segReset marks a segment written by Reset: every segment before it is
	// obsolete (Open removes them, completing an interrupted Reset).
	segReset = 1 << 0

	// recZstd: the payload is a zstd frame of the original bytes.
	recZstd      = 1 << 0
	knownRecFlag = recZstd
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// logID is a log's identity: random, chosen when the log is created, kept
// in log.state and in every (version 2) segment header, so that a segment
// file from another log is recognised as such.
type logID [16]byte

func (id logID) String() string { return fmt.Sprintf("%x", id[:]) }

type segHeader struct {
	version  uint16
	flags    uint16
	first    uint64
	prevTerm uint64
	id       logID // version 2
}

// size is the header's length in the file: where the first record starts.
func (h segHeader) size() int64 {
	if h.version == 1 {
		return segHeaderSizeV1
	}
	return segHeaderSize
}

func (h segHeader) encode() []byte {
	b := make([]byte, segHeaderSize)
	copy(b, segMagic)
	binary.LittleEndian.PutUint16(b[8:], h.version)
	binary.LittleEndian.PutUint16(b[10:], h.flags)
	binary.LittleEndian.PutUint64(b[12:], h.first)
	binary.LittleEndian.PutUint64(b[20:], h.prevTerm)
	copy(b[28:44], h.id[:])
	binary.LittleEndian.PutUint32(b[60:], crc32c(b[:60]))
	return b
}

// segHeaderProblem says why a segment file's header cannot be read.
// foreign: the file is not a lockstep log segment at all (too short for a
// header, or no magic): nothing a crash or a bit flip in a segment of this
// log leaves, since segments are created whole (tmp, fsync, rename).
type segHeaderProblem struct {
	reason  string
	foreign bool
}

// decodeSegHeader checks magic and version before the checksum, so that a
// newer format (whose header may differ) is reported as such. b holds the
// file's first bytes (up to segHeaderSize).
func decodeSegHeader(b []byte, file string) (segHeader, *segHeaderProblem, error) {
	if len(b) < 10 {
		return segHeader{}, &segHeaderProblem{fmt.Sprintf("%d bytes, too short for a segment header", len(b)), true}, nil
	}
	if string(b[:8]) != segMagic {
		return segHeader{}, &segHeaderProblem{"no lockstep log segment magic", true}, nil
	}
	h := segHeader{version: binary.LittleEndian.Uint16(b[8:])}
	if h.version > formatVersion {
		return h, nil, &VersionError{File: file, Version: h.version}
	}
	if h.version == 0 {
		return h, &segHeaderProblem{"segment format version 0", false}, nil
	}
	n := int(h.size())
	if len(b) < n {
		return h, &segHeaderProblem{fmt.Sprintf("%d bytes, too short for a version %d segment header (%d)", len(b), h.version, n), true}, nil
	}
	if binary.LittleEndian.Uint32(b[n-4:]) != crc32c(b[:n-4]) {
		return h, &segHeaderProblem{"segment header checksum mismatch", false}, nil
	}
	h.flags = binary.LittleEndian.Uint16(b[10:])
	h.first = binary.LittleEndian.Uint64(b[12:])
	h.prevTerm = binary.LittleEndian.Uint64(b[20:])
	if h.version >= 2 {
		copy(h.id[:], b[28:44])
	}
	return h, nil, nil
}

type recHeader struct {
	length uint32
	flags  uint32
	term   uint64
	index  uint64
	crc    uint32 // of the stored payload
}

// putRecHeader writes h and its header CRC into b[:32].
func putRecHeader(b []byte, h recHeader) {
	binary.LittleEndian.PutUint32(b[0:], h.length)
	binary.LittleEndian.PutUint32(b[4:], h.flags)
	binary.LittleEndian.PutUint64(b[8:], h.term)
	binary.LittleEndian.PutUint64(b[16:], h.index)
	binary.LittleEndian.PutUint32(b[24:], h.crc)
	binary.LittleEndian.PutUint32(b[28:], crc32c(b[:28]))
}

// parseRecHeader decodes b[:32]; ok is false if the header CRC fails.
func parseRecHeader(b []byte) (h recHeader, ok bool) {
	h = recHeader{
		length: binary.LittleEndian.Uint32(b[0:]),
		flags:  binary.LittleEndian.Uint32(b[4:]),
		term:   binary.LittleEndian.Uint64(b[8:]),
		index:  binary.LittleEndian.Uint64(b[16:]),
		crc:    binary.LittleEndian.Uint32(b[24:]),
	}
	return h, binary.LittleEndian.Uint32(b[28:]) == crc32c(b[:28])
}

// segName is the file name of the segment whose first index is first.
func segName(first uint64) string { return fmt.Sprintf("log-%020d.seg", first) }

// parseSegName returns the first index in a segment file name.
func parseSegName(name string) (uint64, bool) {
	s, ok := strings.CutPrefix(name, "log-")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, ".seg")
	if !ok || len(s) != 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}
