package integration

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestFastPathFuzz generates a random sequence of statements of the shapes
// the fast path recognises — point, IN-list, range and SUM reads, counts
// and reads with residual comparisons on unindexed columns, SUM of a
// DECIMAL over an index prefix, key updates and deletes (also by a key
// prefix)
// (plain and ±), deletes, multi-row inserts, upserts (ON DUPLICATE
// KEY UPDATE, REPLACE), counting joins by primary key, sums grouped by key, transactions — with
// values drawn from edge pools (limits of each integer width, NULL, strings
// too long or of another kind, decimals at their scale, duplicates), runs
// it with the fast path on and then off in fresh databases, and requires
// the same outcome for every statement and the same tables at the end.
// FASTFUZZ_SEED and FASTFUZZ_N replay or lengthen a run.
func TestFastPathFuzz(t *testing.T) {
	srv := startServer(t)
	seed := uint64(20261123)
	if v, err := strconv.ParseUint(os.Getenv("FASTFUZZ_SEED"), 10, 64); err == nil {
		seed = v
	}
	n := 400
	if v, err := strconv.Atoi(os.Getenv("FASTFUZZ_N")); err == nil {
		n = v
	}
	t.Logf("seed %d, %d statements (FASTFUZZ_SEED / FASTFUZZ_N)", seed, n)
	type stmt struct {
		q    string
		args []any
	}
	g := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	ints := []any{0, 1, 2, 3, 5, 7, -1, 127, 128, -128, 255, 256, 32767, 65535, int64(math.MaxInt32), int64(math.MinInt32),
		int64(math.MaxInt32) + 1, int64(math.MaxInt64), int64(math.MinInt64), nil, "3", "x", 2.5, 1.0}
	strs := []any{"", "a", "A", "b", "ab ", "abcdefghij", "abcdefghijk", "é", "É", nil, 7, "0", []byte("a")}
	decs := []any{"0", "1.5", "12.34", "-0.01", "999.99", "1000", "0.005", 1.25, 3, nil, "x", "1e2", "-123.45", "00.10", "+7", ".5", "5.", "999999999999.99", "1000000000000.00", []byte("2.50")}
	key := func() any {
		if g.IntN(10) == 0 {
			return ints[g.IntN(len(ints))]
		}
		return g.IntN(12)
	}
	pick := func(pool []any) any { return pool[g.IntN(len(pool))] }
	small := func(n int) any { // mostly within the values the tables hold
		if g.IntN(8) == 0 {
			return pick(ints)
		}
		return g.IntN(n) - 2
	}
	var prog []stmt
	for i := 0; i < n; i++ {
		switch g.IntN(32) {
		case 0:
			prog = append(prog, stmt{"SELECT * FROM f WHERE id = ?", []any{key()}})
		case 1:
			prog = append(prog, stmt{"SELECT s, i FROM f WHERE id IN (?, ?, ?)", []any{key(), key(), key()}})
		case 2:
			prog = append(prog, stmt{"SELECT id, t FROM f WHERE id BETWEEN ? AND ? ORDER BY t", []any{key(), key()}})
		case 3:
			prog = append(prog, stmt{"SELECT SUM(i) FROM f WHERE id BETWEEN ? AND ?", []any{key(), key()}})
		case 4:
			prog = append(prog, stmt{"SELECT DISTINCT t FROM f WHERE id BETWEEN ? AND ? ORDER BY t", []any{key(), key()}})
		case 5:
			prog = append(prog, stmt{"UPDATE f SET i = ? WHERE id = ?", []any{pick(ints), key()}})
		case 6:
			prog = append(prog, stmt{"UPDATE f SET i = i + ?, t = t - ? WHERE id = ?", []any{pick(ints), pick(ints), key()}})
		case 7:
			prog = append(prog, stmt{"UPDATE f SET s = ?, d = d + ? WHERE id = ?", []any{pick(strs), pick(decs), key()}})
		case 8:
			prog = append(prog, stmt{"DELETE FROM f WHERE id = ?", []any{key()}})
		case 9, 10:
			prog = append(prog, stmt{"INSERT INTO f (id, i, t, s, d) VALUES (?, ?, ?, ?, ?)", []any{key(), pick(ints), pick(ints), pick(strs), pick(decs)}})
		case 11:
			if g.IntN(2) == 0 {
				prog = append(prog, stmt{"INSERT INTO f (id, s) VALUES (?, ?), (?, ?)", []any{key(), pick(strs), key(), pick(strs)}})
			} else {
				prog = append(prog, stmt{"INSERT INTO f (id, i, t) VALUES (?, ?, ?)", []any{key(), pick(ints), g.IntN(3)}})
			}
		case 12:
			prog = append(prog, stmt{"SELECT i, s FROM f WHERE id = ? FOR UPDATE", []any{key()}})
		case 14:
			prog = append(prog, stmt{"SELECT id, s FROM f WHERE i = ? ORDER BY s LIMIT ?", []any{pick(ints), g.IntN(4)}})
		case 15:
			prog = append(prog, stmt{"SELECT id, d FROM f WHERE s = ? AND i = ?", []any{pick(strs), pick(ints)}})
		case 16:
			prog = append(prog, stmt{"SELECT id, s FROM f WHERE i = ? ORDER BY s DESC FOR UPDATE", []any{pick(ints)}})
		case 17:
			prog = append(prog, stmt{"UPDATE f SET t = t + ?, s = ? WHERE id IN (?, ?)", []any{pick(ints), pick(strs), key(), key()}})
		case 18:
			prog = append(prog, stmt{"DELETE FROM f WHERE id IN (?, ?, ?)", []any{key(), key(), key()}})
		case 19:
			prog = append(prog, stmt{"SELECT COUNT(*) FROM f WHERE i = ?", []any{pick(ints)}})
		case 20:
			prog = append(prog, stmt{"SELECT MIN(i) FROM f WHERE t = ?", []any{g.IntN(3)}})
		case 21:
			prog = append(prog, stmt{"SELECT MAX(i) FROM f WHERE t = ?", []any{g.IntN(3)}})
		case 22:
			prog = append(prog, stmt{"INSERT INTO f (id, i, s, d) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE i = i + VALUES(i), s = ?, d = VALUES(d)",
				[]any{key(), pick(ints), pick(strs), pick(decs), pick(strs)}})
		case 23:
			prog = append(prog, stmt{"REPLACE INTO f (id, i, t, s) VALUES (?, ?, ?, ?), (?, ?, ?, ?)",
				[]any{key(), pick(ints), g.IntN(3), pick(strs), key(), pick(ints), g.IntN(3), pick(strs)}})
		case 24:
			prog = append(prog, stmt{"SELECT COUNT(DISTINCT j.v) FROM f, j WHERE f.t = ? AND f.i >= ? AND f.i < ? AND j.a = ? AND j.b = f.t AND j.v < ?",
				[]any{g.IntN(3), small(10), small(200), key(), small(14)}})
		case 25:
			prog = append(prog, stmt{"SELECT COUNT(*) FROM f JOIN j ON j.a = f.id AND j.b = f.t WHERE f.i = ? AND j.v > ?", []any{small(10), small(14)}})
		case 26:
			prog = append(prog, stmt{"SELECT SUM(d), id FROM f WHERE id IN (?, ?, ?) GROUP BY id", []any{key(), key(), key()}})
		case 27:
			prog = append(prog, stmt{"SELECT COUNT(*) FROM j WHERE a = ? AND b = ? AND v < ?", []any{key(), g.IntN(4), pick(ints)}})
		case 28:
			prog = append(prog, stmt{"SELECT id, d FROM f WHERE t = ? AND d >= ? ORDER BY i LIMIT ?", []any{g.IntN(3), pick(decs), g.IntN(4)}})
		case 29:
			prog = append(prog, stmt{"SELECT SUM(d) AS s FROM f WHERE t = ? AND i = ?", []any{g.IntN(3), pick(ints)}})
		case 30:
			prog = append(prog, stmt{"UPDATE j SET v = v + ? WHERE a = ?", []any{small(5), key()}})
		case 31:
			prog = append(prog, stmt{"DELETE FROM j WHERE a = ?", []any{key()}})
		case 13:
			if g.IntN(2) == 0 {
				prog = append(prog, stmt{"BEGIN", nil})
			} else if g.IntN(2) == 0 {
				prog = append(prog, stmt{"COMMIT", nil})
			} else {
				prog = append(prog, stmt{"ROLLBACK", nil})
			}
		}
	}
	prog = append(prog, stmt{"COMMIT", nil})

	run := func(on bool, dsn string) ([]string, int64) {
		e := newDatabase(t, srv)
		admin := e.session("admin")
		setFastPath(t, admin, on)
		db := e.db
		if dsn != "" {
			db = e.openDB(dsn)
		}
		s := newSession(t, e.ctx, db, "client")
		s.exec("CREATE TABLE f (id INT PRIMARY KEY, i INT, t TINYINT UNSIGNED NOT NULL DEFAULT 0, s VARCHAR(10) COLLATE utf8mb4_0900_ai_ci, d DECIMAL(14,2) NOT NULL DEFAULT 0, KEY k_is (i, s), KEY k_ti (t, i))")
		s.exec("CREATE TABLE j (a INT, b TINYINT UNSIGNED, v INT, PRIMARY KEY (a, b))")
		for a := 0; a < 12; a++ {
			for b := 0; b < 3; b++ {
				v := any((a*7 + b*3) % 11)
				if (a+b)%5 == 0 {
					v = nil
				}
				s.exec("INSERT INTO j VALUES (?, ?, ?)", a, b, v)
			}
		}
		h := fastCounter(t, admin, "hits")
		var out []string
		for _, st := range prog {
			var r string
			if strings.HasPrefix(st.q, "SELECT") {
				r = resultOf(s, st.q, st.args...)
			} else if res, err := s.c.ExecContext(s.ctx, st.q, st.args...); err != nil {
				r = fmt.Sprintf("error %d", errno(err))
			} else {
				a, _ := res.RowsAffected()
				r = fmt.Sprintf("affected %d warnings %v", a, s.warnings())
			}
			out = append(out, fmt.Sprintf("%s %v => %s", st.q, st.args, r))
		}
		out = append(out, "end: "+resultOf(s, "SELECT * FROM f ORDER BY id"), "end j: "+resultOf(s, "SELECT * FROM j ORDER BY a, b"))
		hits := fastCounter(t, admin, "hits") - h
		admin.exec("SET GLOBAL lockstep_fast_path = ON")
		return out, hits
	}
	for _, proto := range []struct{ name, dsn string }{{"prepared", ""}, {"text", "interpolateParams=true"}} {
		t.Run(proto.name, func(t *testing.T) {
			on, hits := run(true, proto.dsn)
			off, offHits := run(false, proto.dsn)
			if offHits != 0 {
				t.Fatalf("%d fast path executions with it off", offHits)
			}
			diffs := sameOutcomes(t, on, off)
			if diffs > 0 {
				t.Logf("replay with FASTFUZZ_SEED=%d FASTFUZZ_N=%d", seed, n)
			}
			if hits < int64(n)/4 {
				t.Errorf("the fast path ran %d of %d statements, want at least a quarter", hits, n)
			}
			t.Logf("%d statements, %d on the fast path, %d differences", len(prog), hits, diffs)
		})
	}
}
