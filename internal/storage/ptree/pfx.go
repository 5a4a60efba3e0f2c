package ptree

import (
	"bytes"
	"encoding/binary"
)

// Node prefixes and entry windows (see the package comment, "Entries").

const (
	// pfxCap is the most bytes of shared prefix a node holds.
	pfxCap = 29
	// winLen is how many key bytes after its node's prefix an entry holds.
	winLen = 7
	// more is the length code of an entry whose key has more than winLen
	// bytes after its node's prefix: only those entries' ties resolve.
	more = 8
	// growMin is how many bytes a split must add to a node's prefix before
	// it re-encodes entries it has to resolve for it (see grow).
	growMin = 4
)

// hdr is a node's count and the bytes every key under it starts with (of
// a leaf: its entries' keys; of an inner node: its separators' keys). It
// is 32 bytes and holds no pointer. The prefix of an empty node means
// nothing; the first key admitted sets it.
type hdr struct {
	n    uint16
	plen uint8
	pfx  [pfxCap]byte
}

// entry is a key as its node holds it: w is the window, the key's bytes
// after the node's prefix (at most winLen, big-endian in the top 7 bytes,
// zero-padded) with a length code in the low byte (how many bytes follow
// the prefix, or more); ref is the caller's Ref.
type entry struct {
	w   uint64
	ref uint64
}

func (h *hdr) prefix() []byte { return h.pfx[:h.plen] }

// window returns the window of key, whose first plen bytes are its node's
// prefix.
func window(key []byte, plen int) uint64 {
	r := key[plen:]
	if len(r) >= 8 {
		return binary.BigEndian.Uint64(r)&^0xff | more
	}
	var b [8]byte
	copy(b[:], r)
	return binary.BigEndian.Uint64(b[:]) | uint64(len(r))
}

// probe compares key with the prefix of h's keys: -1 when key is below
// every key that starts with it, 1 when above, else 0 and key's window.
// Two windows compare as their keys do unless both are equal and have the
// code more (the package comment, "Entries").
func (h *hdr) probe(key []byte) (int, uint64) {
	p := h.pfx[:h.plen]
	if len(key) < len(p) {
		if c := bytes.Compare(key, p[:len(key)]); c != 0 {
			return c, 0
		}
		return -1, 0 // key is a proper prefix of every key of the node
	}
	if c := bytes.Compare(key[:len(p)], p); c != 0 {
		return c, 0
	}
	return 0, window(key, len(p))
}

// kbuf is an entry's key as far as its node knows it: the node's prefix
// and the entry's window bytes. When more is set the key goes on past
// b[:n]; otherwise b[:n] is the whole key. Entries move between nodes with
// different prefixes as a kbuf.
type kbuf struct {
	b    [pfxCap + winLen]byte
	n    int
	more bool
	ref  uint64
}

// decode returns the known bytes of e, an entry of h.
func (h *hdr) decode(e entry) kbuf {
	var k kbuf
	k.n = copy(k.b[:], h.pfx[:h.plen])
	c := int(e.w & 0xff)
	var w [8]byte
	binary.BigEndian.PutUint64(w[:], e.w)
	k.n += copy(k.b[k.n:], w[:min(c, winLen)])
	k.more = c == more
	k.ref = e.ref
	return k
}

// encode returns k as an entry of a node whose prefix, plen bytes long,
// k's key starts with. It resolves the key only when k does not know the
// bytes the window needs (k.more and plen beyond the prefix k came from).
func (t *Tree) encode(k *kbuf, plen int) entry {
	switch {
	case !k.more:
		return entry{window(k.b[:k.n], plen), k.ref}
	case plen+winLen <= k.n:
		return entry{window(k.b[:k.n], plen)&^0xff | more, k.ref}
	}
	return entry{window(t.keyOf(k.ref), plen), k.ref}
}

// lcp is the length of the common prefix of a and b.
func lcp(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// common returns how many leading bytes of p k's key shares, resolving
// the key only when its known bytes all match and p is longer.
func (t *Tree) common(p []byte, k *kbuf) int {
	n := lcp(p, k.b[:k.n])
	if n == k.n && k.more && n < len(p) {
		return lcp(p, t.keyOf(k.ref))
	}
	return n
}

// setFrom makes k's known bytes (those before a window that k can encode
// without resolving) the prefix of the empty node h.
func (h *hdr) setFrom(k *kbuf) {
	n := k.n
	if k.more {
		n -= winLen
	}
	h.plen = uint8(copy(h.pfx[:], k.b[:n]))
}

// admit makes h's prefix one that k's key starts with, before k joins es
// (h's entries): an empty node takes k's bytes, a node whose prefix k does
// not share cuts it to what they share.
func (t *Tree) admit(h *hdr, es []entry, k *kbuf) {
	if len(es) == 0 {
		h.setFrom(k)
		return
	}
	if c := t.common(h.prefix(), k); c < int(h.plen) {
		t.shrink(h, es, c)
	}
}

// admitKey is admit for a whole key (Set's).
func (t *Tree) admitKey(h *hdr, es []entry, key []byte) {
	if len(es) == 0 {
		h.plen = uint8(copy(h.pfx[:], key))
		return
	}
	if c := lcp(h.prefix(), key); c < int(h.plen) {
		t.shrink(h, es, c)
	}
}

// shrink cuts h's prefix to plen bytes, moving the bytes cut to the front
// of es' windows (es: h's entries). It never resolves a key: the bytes a
// window needs are in the old prefix and the old window.
func (t *Tree) shrink(h *hdr, es []entry, plen int) {
	for i := range es {
		k := h.decode(es[i])
		es[i] = t.encode(&k, plen)
	}
	h.plen = uint8(plen)
}

// grow lengthens h's prefix (es: h's entries, just split) to what its
// first and last keys share, as far as their windows show it. It does so
// when that is free — no entry has the code more — or when the prefix
// grows by growMin bytes or more, which leaves at most winLen-growMin
// bytes of the windows telling entries apart, so searches would tie often;
// then each entry with the code more is resolved once.
func (t *Tree) grow(h *hdr, es []entry) {
	if len(es) == 0 {
		return
	}
	a, b := h.decode(es[0]), h.decode(es[len(es)-1])
	// Exact unless the shorter known key has more bytes: then a lower bound.
	c := min(lcp(a.b[:a.n], b.b[:b.n]), pfxCap)
	if c <= int(h.plen) {
		return
	}
	if c-int(h.plen) < growMin {
		for _, e := range es {
			if e.w&0xff == more {
				return
			}
		}
	}
	for i := range es {
		k := h.decode(es[i])
		es[i] = t.encode(&k, c)
	}
	copy(h.pfx[:c], a.b[:c])
	h.plen = uint8(c)
}
