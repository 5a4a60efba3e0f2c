package group

import (
	"fmt"
	"slices"
	"time"
)

// summarize gives the count, median, 99th percentile (nearest rank: with
// fewer than 100 samples it is the largest), minimum and maximum of ds.
func summarize(ds []time.Duration) string {
	if len(ds) == 0 {
		return "no samples"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("n %d, p50 %v, p99 %v, min %v, max %v",
		len(s), r(percentile(s, 50)), r(percentile(s, 99)), r(s[0]), r(s[len(s)-1]))
}

// percentile is the nearest-rank p-th percentile of sorted s.
func percentile(s []time.Duration, p int) time.Duration {
	rank := (p*len(s) + 99) / 100 // ceil(p/100 * n)
	return s[max(rank, 1)-1]
}
