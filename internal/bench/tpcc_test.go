package bench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

// TestTPCCLockstep loads a scaled-down database (2 warehouses, 1,000 items,
// 30 customers per district) into a real lockstep server, runs the mix with 4
// threads for 6 s, and requires every transaction type to commit, no errors,
// and every consistency check to pass.
func TestTPCCLockstep(t *testing.T) {
	s := testutil.StartServer(t)
	runTPCCTest(t, s.DSN("tpcc"))
}

// TestTPCCExternal runs the same against the server named by TPCC_TEST_DSN
// (MariaDB, say: TPCC_TEST_DSN='user:pw@tcp(127.0.0.1:3306)/tpcc_test'); it
// drops and re-creates the nine tables in that database.
func TestTPCCExternal(t *testing.T) {
	dsn := os.Getenv("TPCC_TEST_DSN")
	if dsn == "" {
		t.Skip("missing tool: a MySQL-compatible server to run against (MariaDB 10.11, say); set TPCC_TEST_DSN to its DSN")
	}
	runTPCCTest(t, dsn)
}

func runTPCCTest(t *testing.T, dsn string) {
	var out bytes.Buffer
	cfg := Config{
		DSN:            dsn,
		Warehouses:     2,
		Threads:        4,
		Duration:       6 * time.Second,
		Warmup:         time.Second,
		ReportInterval: 2 * time.Second,
		Load:           true,
		ScaleDown:      100,
		Check:          true,
		Seed:           42,
		Out:            &out,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	res, err := Run(ctx, cfg)
	defer func() {
		if t.Failed() {
			t.Logf("output:\n%s", out.String())
		}
	}()
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for typ := TxType(0); typ < numTxTypes; typ++ {
		if res.Types[typ].Commits == 0 {
			t.Errorf("no %s transaction committed", typ)
		}
	}
	for _, e := range res.Errors {
		t.Errorf("error (%d times): %s", e.Count, e.Message)
	}
	if len(res.Checks) < 12 {
		t.Errorf("%d consistency checks ran, want 12", len(res.Checks))
	}
	for _, c := range res.Checks {
		if !c.Pass {
			t.Errorf("consistency check %s (%s) failed: %s", c.Clause, c.Name, c.Detail)
		}
	}
	if res.TpmC <= 0 {
		t.Errorf("tpmC %v", res.TpmC)
	}
	if err := res.Err(); err != nil {
		t.Errorf("Result.Err: %v", err)
	}
	text := out.String()
	for _, want := range []string{"tpmC", "New-Order", "Stock-Level", "3.3.2.4", "result: PASS", "[   2s]"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	t.Logf("tpmC %.0f; %d New-Order, %d Payment, %d Order-Status, %d Delivery, %d Stock-Level committed",
		res.TpmC, res.Types[NewOrder].Commits, res.Types[Payment].Commits, res.Types[OrderStatus].Commits,
		res.Types[Delivery].Commits, res.Types[StockLevel].Commits)
}

func TestNURand(t *testing.T) {
	r := newRNG(1, 2)
	for _, tc := range []struct{ a, x, y int }{{255, 0, 999}, {1023, 1, 3000}, {8191, 1, 100000}, {255, 0, 29}, {1023, 1, 30}} {
		seen := map[int]bool{}
		for i := 0; i < 20000; i++ {
			v := r.nuRand(tc.a, 123, tc.x, tc.y)
			if v < tc.x || v > tc.y {
				t.Fatalf("NURand(%d, %d, %d) = %d out of range", tc.a, tc.x, tc.y, v)
			}
			seen[v] = true
		}
		if tc.y-tc.x < 100 && len(seen) != tc.y-tc.x+1 {
			t.Errorf("NURand(%d, %d, %d) produced %d distinct values", tc.a, tc.x, tc.y, len(seen))
		}
	}
}

func TestRunConsts(t *testing.T) {
	for seed := uint64(1); seed < 200; seed++ {
		c := runConsts(newRNG(seed, 0))
		d := c.cLast - cLastLoad
		if d < 0 {
			d = -d
		}
		if d < 65 || d > 119 || d == 96 || d == 112 {
			t.Fatalf("C_LAST run %d, load %d: delta %d not allowed", c.cLast, cLastLoad, d)
		}
		if c.cID < 0 || c.cID > 1023 || c.olIID < 0 || c.olIID > 8191 {
			t.Fatalf("constants out of range: %+v", c)
		}
	}
}

func TestLastName(t *testing.T) {
	for n, want := range map[int]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING", 40: "BARPRESBAR"} {
		if got := lastName(n); got != want {
			t.Errorf("lastName(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestStrings(t *testing.T) {
	r := newRNG(3, 4)
	original := 0
	for i := 0; i < 2000; i++ {
		s := r.dataString()
		if len(s) < 26 || len(s) > 50 {
			t.Fatalf("data string length %d", len(s))
		}
		if strings.Contains(s, "ORIGINAL") {
			original++
		}
		if z := r.zip(); len(z) != 9 || !strings.HasSuffix(z, "11111") {
			t.Fatalf("zip %q", z)
		}
	}
	if original < 120 || original > 280 {
		t.Errorf("%d of 2000 data strings hold ORIGINAL, want about 10%%", original)
	}
}

func TestFixed(t *testing.T) {
	for _, tc := range []struct {
		s     string
		scale int
		want  int64
		ok    bool
	}{
		{"-10.00", 2, -1000, true},
		{"60000", 2, 6000000, true},
		{"0.1234", 4, 1234, true},
		{".5", 2, 50, true},
		{"112509.4", 2, 11250940, true},
		{"2023.5699999999997", 2, 202357, true},
		{"1.34611087e+06", 2, 134611087, true},
		{"-0.005", 2, -1, true},
		{"", 2, 0, false},
		{"abc", 2, 0, false},
		{"1.2.3", 2, 0, false},
	} {
		got, ok := parseFixed(tc.s, tc.scale)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseFixed(%q, %d) = %d, %v; want %d, %v", tc.s, tc.scale, got, ok, tc.want, tc.ok)
		}
	}
	for v, want := range map[int64]string{0: "0.00", 5: "0.05", -1000: "-10.00", 123456: "1234.56"} {
		if got := money(v); got != want {
			t.Errorf("money(%d) = %s, want %s", v, got, want)
		}
	}
	if got := fixed(1234, 4); got != "0.1234" {
		t.Errorf("fixed(1234, 4) = %s", got)
	}
}

func TestScale(t *testing.T) {
	full := NewScale(4, 1)
	if full.Items != 100000 || full.Customers != 3000 || full.NewOrders != 900 || full.firstUndelivered() != 2101 || full.lastNameMax() != 999 {
		t.Errorf("full scale %+v", full)
	}
	small := NewScale(2, 100)
	if small.Items != 1000 || small.Customers != 30 || small.NewOrders != 9 || small.firstUndelivered() != 22 || small.lastNameMax() != 29 {
		t.Errorf("scaled down %+v", small)
	}
}

func TestPercentile(t *testing.T) {
	s := TypeStats{}
	for i := 1; i <= 100; i++ {
		s.Latencies = append(s.Latencies, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 50 * time.Millisecond, 95: 95 * time.Millisecond, 99: 99 * time.Millisecond, 100: 100 * time.Millisecond} {
		if got := s.Percentile(p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if (&TypeStats{}).Percentile(50) != 0 {
		t.Error("percentile of nothing")
	}
}

func TestValidate(t *testing.T) {
	good := Config{DSN: "root@tcp(127.0.0.1:3306)/x", Warehouses: 1, Threads: 1, ScaleDown: 1}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	for name, mod := range map[string]func(*Config){
		"warehouses": func(c *Config) { c.Warehouses = 0 },
		"threads":    func(c *Config) { c.Threads = 0 },
		"scale-down": func(c *Config) { c.ScaleDown = MaxScaleDown + 1 },
		"duration":   func(c *Config) { c.Duration = -time.Second },
		"dsn":        func(c *Config) { c.DSN = "root@tcp(127.0.0.1:3306" },
	} {
		c := good
		mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: Validate() = %v", name, err)
		}
	}
}
