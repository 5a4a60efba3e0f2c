package certify

import (
	"os"
	"strings"
	"testing"
)

func TestZZHuge(t *testing.T) {
	c := mustStatic(t, DefaultConfig())
	touchAllBuckets(c)
	t.Logf("huge advised %v", c.hugePages)
	b, _ := os.ReadFile("/proc/self/smaps_rollup")
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, "Huge") || strings.Contains(l, "Rss") {
			t.Log(l)
		}
	}
}
