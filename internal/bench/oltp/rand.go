package oltp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Dist is sysbench's --rand-type with its parameters: the distribution of
// the row ids (and k values) a workload picks.
type Dist struct {
	Type    string  // special (sysbench 1.0.20's default), uniform, gaussian, pareto
	Iter    int     // --rand-spec-iter: uniforms summed for gaussian and special's gaussian part (12)
	Pct     int     // --rand-spec-pct: the hot part of the range, in percent (1)
	Res     int     // --rand-spec-res: the share of picks in the hot part, in percent (75)
	ParetoH float64 // --rand-pareto-h (0.2)
}

// DefaultDist is sysbench 1.0.20's default: --rand-type=special
// --rand-spec-iter=12 --rand-spec-pct=1 --rand-spec-res=75.
func DefaultDist() Dist {
	return Dist{Type: "special", Iter: 12, Pct: 1, Res: 75, ParetoH: 0.2}
}

// Validate reports a setting sysbench would not accept.
func (d Dist) Validate() error {
	switch d.Type {
	case "special", "uniform", "gaussian", "pareto":
	default:
		return fmt.Errorf("--rand-type must be special, uniform, gaussian or pareto, not %q", d.Type)
	}
	switch {
	case d.Iter < 1:
		return fmt.Errorf("--rand-spec-iter must be at least 1, not %d", d.Iter)
	case d.Pct < 0 || d.Pct > 100:
		return fmt.Errorf("--rand-spec-pct must be 0..100, not %d", d.Pct)
	case d.Res < 0 || d.Res >= 100:
		return fmt.Errorf("--rand-spec-res must be 0..99, not %d", d.Res)
	case d.ParetoH <= 0 || d.ParetoH >= 1:
		return fmt.Errorf("--rand-pareto-h must be between 0 and 1, not %g", d.ParetoH)
	}
	return nil
}

// rng is one thread's random source with sysbench's functions on top
// (src/sb_rand.c): every distribution is computed from uniform doubles in
// [0, 1) the way sysbench computes it, truncations included.
type rng struct {
	r    *rand.Rand
	dist Dist
	// precomputed as sb_rand_init does
	iterMult, pctMult, pct2Mult, resMult, paretoPower float64
}

func newRNG(seed, stream uint64, d Dist) *rng {
	return &rng{
		r:           rand.New(rand.NewPCG(seed, stream)),
		dist:        d,
		iterMult:    1 / float64(d.Iter),
		pctMult:     float64(d.Pct) / 100,
		pct2Mult:    float64(d.Pct) / 200,
		resMult:     100 / (100 - float64(d.Res)),
		paretoPower: math.Log(d.ParetoH) / math.Log(1-d.ParetoH),
	}
}

// uniform is sysbench.rand.uniform(a, b): a + floor(u * (b - a + 1)).
func (g *rng) uniform(a, b uint32) uint32 {
	return a + uint32(g.r.Float64()*float64(b-a+1))
}

// def is sysbench.rand.default(a, b): the --rand-type distribution.
func (g *rng) def(a, b uint32) uint32 {
	switch g.dist.Type {
	case "uniform":
		return g.uniform(a, b)
	case "gaussian":
		return g.gaussian(a, b)
	case "pareto":
		return a + uint32(float64(b-a+1)*math.Pow(g.r.Float64(), g.paretoPower))
	default:
		return g.special(a, b)
	}
}

// gaussian is sb_rand_gaussian: the mean of Iter uniforms over [a, b].
func (g *rng) gaussian(a, b uint32) uint32 {
	t := float64(b - a + 1)
	sum := 0.0
	for range g.dist.Iter {
		sum += g.r.Float64() * t
	}
	return a + uint32(sum*g.iterMult)
}

// special is sb_rand_special. One uniform u picks the branch: with
// probability (100-Res)% (u*t*100/(100-Res) < t) the value is the mean of
// Iter uniforms over [a, b); otherwise u itself is mapped onto the Pct%
// of the range around its centre. With the defaults, 75% of the picks hit
// about 1% of the rows (ids near the middle of the table).
func (g *rng) special(a, b uint32) uint32 {
	t := float64(b - a)
	rnd := g.r.Float64()
	if rnd*t*g.resMult < t {
		sum := 0.0
		for range g.dist.Iter {
			sum += g.r.Float64()
		}
		return a + uint32(sum*t*g.iterMult)
	}
	d := t * g.pctMult
	res := rnd*(d+1) + t/2 - t*g.pct2Mult
	return a + uint32(res)
}

// str is sysbench.rand.string(template): each '#' a random digit, each '@'
// a random lower-case letter, anything else kept.
func (g *rng) str(template string) string {
	var b strings.Builder
	b.Grow(len(template))
	for i := 0; i < len(template); i++ {
		switch template[i] {
		case '#':
			b.WriteByte(byte(g.uniform('0', '9')))
		case '@':
			b.WriteByte(byte(g.uniform('a', 'z')))
		default:
			b.WriteByte(template[i])
		}
	}
	return b.String()
}

// The templates of oltp_common.lua: groups of 11 random digits joined by
// dashes, 10 groups (119 characters) for c and 5 (59) for pad.
var (
	cTemplate   = strings.Repeat("###########-", 9) + "###########"
	padTemplate = strings.Repeat("###########-", 4) + "###########"
)
