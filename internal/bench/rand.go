package bench

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Scale is the size of a TPC-C database. Full scale (Clause 1.2, 4.3) has
// 100,000 items, 10 districts per warehouse, 3,000 customers per district
// (and as many initial orders, the last 900 of them undelivered) and one
// stock row per item and warehouse. --scale-down N divides the item and
// customer counts by N, for tests.
type Scale struct {
	Warehouses int
	Items      int // ITEM rows, and STOCK rows per warehouse
	Districts  int // per warehouse: always 10
	Customers  int // per district, and initial orders per district
	NewOrders  int // undelivered initial orders per district (the last ones)
}

// Full-scale cardinalities from the specification.
const (
	fullItems     = 100000
	fullCustomers = 3000
	fullNewOrders = 900
	districts     = 10
	// MaxScaleDown keeps at least 30 customers per district and 1,000 items.
	MaxScaleDown = 100
)

// NewScale returns the cardinalities for w warehouses divided by scaleDown.
func NewScale(w, scaleDown int) Scale {
	if scaleDown < 1 {
		scaleDown = 1
	}
	c := fullCustomers / scaleDown
	return Scale{
		Warehouses: w,
		Items:      fullItems / scaleDown,
		Districts:  districts,
		Customers:  c,
		NewOrders:  c * fullNewOrders / fullCustomers,
	}
}

// firstUndelivered is the first initial order id still in NEW-ORDER (2101 at
// full scale).
func (s Scale) firstUndelivered() int { return s.Customers - s.NewOrders + 1 }

// lastNameMax is the highest last-name number a customer certainly has: the
// first 1,000 customers of a district carry the names 0..999 (Clause
// 4.3.3.1), fewer when the database is scaled down.
func (s Scale) lastNameMax() int { return min(999, s.Customers-1) }

// rng wraps a PCG source with the specification's random functions.
type rng struct{ *rand.Rand }

func newRNG(seed uint64, stream uint64) rng {
	return rng{rand.New(rand.NewPCG(seed, stream))}
}

// uniform returns a uniformly distributed integer in [lo, hi] (Clause 2.1.4).
func (r rng) uniform(lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// nuRand is the non-uniform random function of Clause 2.1.6:
// (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x.
func (r rng) nuRand(a, c, x, y int) int {
	return (((r.uniform(0, a) | r.uniform(x, y)) + c) % (y - x + 1)) + x
}

const alnum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// aString is a random alphanumeric string of length [lo, hi] (Clause 4.3.2.2).
func (r rng) aString(lo, hi int) string {
	n := r.uniform(lo, hi)
	b := make([]byte, n)
	for i := range b {
		b[i] = alnum[r.IntN(len(alnum))]
	}
	return string(b)
}

// nString is a random numeric string of length [lo, hi].
func (r rng) nString(lo, hi int) string {
	n := r.uniform(lo, hi)
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('0' + r.IntN(10))
	}
	return string(b)
}

// dataString is I_DATA / S_DATA: a-string [26..50], 10% of them with
// "ORIGINAL" at a random position (Clause 4.3.3.1).
func (r rng) dataString() string {
	s := r.aString(26, 50)
	if r.IntN(10) == 0 {
		p := r.IntN(len(s) - 8 + 1)
		s = s[:p] + "ORIGINAL" + s[p+8:]
	}
	return s
}

// zip is a random n-string of 4 followed by "11111" (Clause 4.3.2.7).
func (r rng) zip() string { return r.nString(4, 4) + "11111" }

// state is two random letters.
func (r rng) state() string {
	return string([]byte{byte('A' + r.IntN(26)), byte('A' + r.IntN(26))})
}

var syllables = [10]string{"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

// lastName builds C_LAST from a number in [0, 999]: its three digits select
// three syllables (Clause 4.3.2.3).
func lastName(n int) string {
	return syllables[n/100] + syllables[(n/10)%10] + syllables[n%10]
}

// The constants C of NURand (Clause 2.1.6). C_LAST's load-time constant is
// fixed here (a value picked at random once) so that a run in another process
// can choose its own constant at the distance Clause 2.1.6.1 requires.
const cLastLoad = 157

// nuConsts are the run-time constants C for NURand.
type nuConsts struct {
	cLast, cID, olIID int
}

// runConsts picks the run-time constants: C_ID and OL_I_ID at random, C_LAST
// so that |C_LAST_run - C_LAST_load| is in [65, 119] and not 96 or 112.
func runConsts(r rng) nuConsts {
	var c nuConsts
	for {
		c.cLast = r.uniform(0, 255)
		d := c.cLast - cLastLoad
		if d < 0 {
			d = -d
		}
		if d >= 65 && d <= 119 && d != 96 && d != 112 {
			break
		}
	}
	c.cID = r.uniform(0, 1023)
	c.olIID = r.uniform(0, 8191)
	return c
}

// money formats cents as a DECIMAL literal: 12345 -> "123.45".
func money(cents int64) string { return fixed(cents, 2) }

// fixed formats v / 10^scale as a decimal string.
func fixed(v int64, scale int) string {
	neg := v < 0
	if neg {
		v = -v
	}
	s := strconv.FormatInt(v, 10)
	if len(s) <= scale {
		s = strings.Repeat("0", scale-len(s)+1) + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

// parseFixed parses a DECIMAL value as returned by a server ("-10.00",
// "60000", "0.1234") into v * 10^scale, rounding extra fraction digits half
// away from zero. A DOUBLE in exponent form ("1.34611087e+06", as lockstep
// renders SUM over a DECIMAL column) is converted through float64.
func parseFixed(s string, scale int) (int64, bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false
	}
	if strings.ContainsAny(s, "eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return 0, false
		}
		return int64(math.Round(f * math.Pow10(scale))), true
	}
	neg := false
	switch s[0] {
	case '-':
		neg = true
		s = s[1:]
	case '+':
		s = s[1:]
	}
	ip, fp, _ := strings.Cut(s, ".")
	if ip == "" && fp == "" {
		return 0, false
	}
	var v int64
	for _, ch := range ip {
		if ch < '0' || ch > '9' {
			return 0, false
		}
		v = v*10 + int64(ch-'0')
	}
	for i := 0; i < scale; i++ {
		d := int64(0)
		if i < len(fp) {
			if fp[i] < '0' || fp[i] > '9' {
				return 0, false
			}
			d = int64(fp[i] - '0')
		}
		v = v*10 + d
	}
	if len(fp) > scale {
		for _, ch := range fp[scale:] {
			if ch < '0' || ch > '9' {
				return 0, false
			}
		}
		if fp[scale] >= '5' {
			v++
		}
	}
	if neg {
		v = -v
	}
	return v, true
}
