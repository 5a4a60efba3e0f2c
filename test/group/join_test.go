package group

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"lockstep/internal/testutil"
)

const (
	// joinBefore: the load's 1-second windows the join is compared with.
	joinBefore = 4 * time.Second
	// joinAfter: load after the new member is promoted.
	joinAfter = 3 * time.Second
	// joinGoal: the goal, no window during the join below this
	// share of before (logged, not enforced: the members share two
	// CPUs with whatever else runs).
	joinGoal = 0.9
)

// joinArgs make every member checkpoint every 256 KiB of log, so that the
// primary's log no longer starts at the beginning when the new member
// joins: it must get a checkpoint, not the log from the start.
var joinArgs = []string{"--checkpoint-log-size", "256K", "--log-segment-size", "64K"}

// TestGroupJoin: a fourth member is added under the bank-transfer load
// (group_replication_add_member on the primary): it joins as a learner,
// installs the primary's checkpoint, catches up and is promoted to a
// voter; at the end all four members hold every acknowledged transfer and
// identical tables. The primary's commits per 1-second window before and
// during the join are logged, with each window's share of the mean before;
// a window with no commit fails the test. LOCKSTEP_GROUP_ROUNDS=N runs N
// rounds, each on a new group, and sums them up (docs/benchmarks/notes.md).
func TestGroupJoin(t *testing.T) {
	rounds := envInt(t, "LOCKSTEP_GROUP_ROUNDS", 1)
	modes := joinModes(t)
	type sum struct{ ratios, mins, beforeMins, after []float64 }
	sums := make([]sum, len(modes))
	for r := 1; r <= rounds; r++ {
		k := (r - 1) % len(modes)
		mode := modes[k]
		t.Run("round"+strconv.Itoa(r)+"-"+mode.name, func(t *testing.T) {
			during, after, beforeMin := joinRound(t, mode)
			if len(during) > 0 {
				s := &sums[k]
				s.after = append(s.after, after...)
				s.ratios = append(s.ratios, during...)
				s.mins = append(s.mins, slices.Min(during))
				s.beforeMins = append(s.beforeMins, beforeMin)
			}
		})
	}
	for k, s := range sums {
		if len(s.mins) == 0 {
			continue
		}
		ratios := slices.Clone(s.ratios)
		slices.Sort(ratios)
		below := 0
		for _, r := range ratios {
			if r < joinGoal {
				below++
			}
		}
		mins := slices.Clone(s.mins)
		slices.Sort(mins)
		after := slices.Clone(s.after)
		slices.Sort(after)
		afterP50 := math.NaN()
		if len(after) > 0 {
			afterP50 = after[(len(after)-1)/2]
		}
		t.Logf("join, mode %s: %d rounds; lowest window per round (share of the mean before) %s (median %.2f); all %d windows during the joins: min %.2f, p50 %.2f, max %.2f; %d below %.2f; for comparison the lowest window before the join per round %s; the %d windows after (four members): p50 %.2f",
			modes[k].name, len(s.mins), fmtRatios(s.mins), mins[(len(mins)-1)/2], len(ratios), ratios[0], ratios[(len(ratios)-1)/2], ratios[len(ratios)-1], below, joinGoal, fmtRatios(s.beforeMins), len(after), afterP50)
	}
}

// joinMode is how a round of TestGroupJoin runs: more options for every
// member, and whether the joining member runs at the lowest CPU priority
// (nice 19: on one machine, what of the primary's slowdown is the new
// member's work on the shared CPUs).
type joinMode struct {
	name string
	bin  string // the lockstep binary ("": the test's)
	nice bool
	// capPct > 0: member 4 runs in a CPU cgroup capped at that share of
	// one CPU (mode "cap", LOCKSTEP_JOIN_CAP_PCT, default 20): on one
	// machine, the nearest to a member on a machine of its own, whose
	// work takes no CPU from the primary.
	capPct int
}

// joinModes are the modes LOCKSTEP_JOIN_MODES names (comma-separated;
// rounds take them in turn, so that modes compare in the same run):
// "base"; "nice" (member 4 at nice 19); "cap" (member 4 in a CPU cgroup
// capped at LOCKSTEP_JOIN_CAP_PCT% of one CPU; needs root and cgroup v1's
// cpu controller); "old" and "oldnice", the same with every member
// running the binary LOCKSTEP_JOIN_OLD_BIN (a build before a change, to
// compare with).
func joinModes(t *testing.T) []joinMode {
	old := os.Getenv("LOCKSTEP_JOIN_OLD_BIN")
	all := map[string]joinMode{
		"base":    {name: "base"},
		"nice":    {name: "nice", nice: true},
		"cap":     {name: "cap", capPct: envInt(t, "LOCKSTEP_JOIN_CAP_PCT", 20)},
		"old":     {name: "old", bin: old},
		"oldnice": {name: "oldnice", bin: old, nice: true},
	}
	var out []joinMode
	for _, n := range strings.Split(envString("LOCKSTEP_JOIN_MODES", "base"), ",") {
		m, ok := all[strings.TrimSpace(n)]
		if !ok {
			t.Fatalf("LOCKSTEP_JOIN_MODES: unknown mode %q (base, nice, cap, old, oldnice)", n)
		}
		if strings.HasPrefix(m.name, "old") && old == "" {
			t.Fatalf("LOCKSTEP_JOIN_MODES: mode %s needs LOCKSTEP_JOIN_OLD_BIN", m.name)
		}
		out = append(out, m)
	}
	return out
}

// reniceAll sets the nice value of every thread of process pid (Linux's
// setpriority acts on one thread; threads created later inherit it from
// their creator).
func reniceAll(t *testing.T, pid, nice int) {
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		t.Fatalf("renice: %v", err)
	}
	for _, e := range tasks {
		tid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if err := syscall.Setpriority(syscall.PRIO_PROCESS, tid, nice); err != nil {
			t.Fatalf("renice thread %d of %d: %v", tid, pid, err)
		}
	}
}

// cpuCap moves process pid into a new cgroup (v1 cpu controller) whose
// CFS quota is pct% of one CPU, and undoes it at the test's end.
func cpuCap(t *testing.T, pid, pct int) {
	const root = "/sys/fs/cgroup/cpu"
	if _, err := os.Stat(filepath.Join(root, "cpu.cfs_quota_us")); err != nil {
		t.Fatalf("mode cap needs cgroup v1's cpu controller at %s: %v", root, err)
	}
	dir := filepath.Join(root, "lockstep-join-"+strconv.Itoa(pid))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatalf("cpu cap: %v", err)
	}
	write := func(file, v string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0o644); err != nil {
			t.Fatalf("cpu cap: %s: %v", file, err)
		}
	}
	write("cpu.cfs_period_us", "100000")
	write("cpu.cfs_quota_us", strconv.Itoa(pct*1000))
	write("cgroup.procs", strconv.Itoa(pid))
	t.Cleanup(func() {
		_ = os.WriteFile(filepath.Join(root, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644)
		_ = os.Remove(dir)
	})
}

// joinRound runs one join on a new group and returns the ratios of the
// primary's windows during the join and after it (four members, the new
// one caught up) to its mean before, and the lowest window's before the
// join (how much the windows vary without a join).
func joinRound(t *testing.T, mode joinMode) (during, afterJoin []float64, beforeMin float64) {
	nice := mode.nice
	c := startClusterWith(t, clusterOptions{args: joinArgs, bin: mode.bin})
	cpu := startCPUSampler(c)
	defer cpu.close()
	b := newBank(t, c)
	p := c.waitPrimary(0)
	b.setup(p)
	c.waitConverged()
	b.round = 1
	b.start()
	// Until a checkpoint has cut the head of the primary's log.
	deadline := time.Now().Add(stepTimeout)
	var first int64
	b.runUntil(func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if v, err := globalStatus(ctx, p, "Lockstep_log_first_index"); err == nil {
			first = v
		}
		return first > 2 || time.Now().After(deadline)
	})
	if first <= 2 {
		t.Fatalf("the primary's log still starts at %d after %v of load", first, stepTimeout)
	}

	port, err := testutil.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	m4 := &member{id: groupSize + 1, groupAddr: "127.0.0.1:" + strconv.Itoa(port),
		datadir: filepath.Join(t.TempDir(), "member4")}
	m4.seeds = fmt.Sprintf("%s,%d=%s", c.seeds, m4.id, m4.groupAddr)
	c.members = append(c.members, m4)
	c.start(m4, false) // it waits to be added
	if nice {
		reniceAll(t, m4.srv.PID(), 19)
	}
	if mode.capPct > 0 {
		cpuCap(t, m4.srv.PID(), mode.capPct)
	}

	beforeFrom := time.Now()
	profileBefore := profilePrimary(t, p, "before", joinBefore-2*time.Second, 2*time.Second)
	b.run(joinBefore)
	joinAt := time.Now()
	profileDuring := profilePrimary(t, p, "during", 0, 2*time.Second)
	defer profileBefore()
	defer profileDuring()
	exec(t, p, fmt.Sprintf("SELECT group_replication_add_member(%d, '%s')", m4.id, m4.groupAddr))
	var promotedAt time.Time
	deadline = time.Now().Add(stepTimeout)
	b.runUntil(func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if st, err := status(ctx, p); err == nil && st["voters"] == 4 && st["learners"] == 0 {
			promotedAt = time.Now()
			return true
		}
		return time.Now().After(deadline)
	})
	if promotedAt.IsZero() {
		t.Fatalf("member 4 was not promoted to a voter within %v of its addition\n%s", stepTimeout, c.describe())
	}
	b.run(joinAfter)
	stopAt := time.Now()
	acked, unknown, refused := b.stop()
	if now := c.findPrimary(t.Context()); now != p {
		t.Fatalf("the primary changed during the join (member %d before, %v now)", p.id, now)
	}

	// The primary's commits per second, as its clients saw them.
	acks := b.ledger.ackTimes(b.round, p.id)
	count := func(from time.Time) int {
		n := 0
		for _, at := range acks {
			if !at.Before(from) && at.Before(from.Add(time.Second)) {
				n++
			}
		}
		return n
	}
	var before, perSec []int
	for from := beforeFrom; !from.Add(time.Second).After(joinAt); from = from.Add(time.Second) {
		before = append(before, count(from))
	}
	// During: from the addition until a second after the promotion (the
	// member's catching up ends there), whole windows.
	for from := joinAt; from.Before(promotedAt.Add(time.Second)); from = from.Add(time.Second) {
		perSec = append(perSec, count(from))
	}
	// After: four members, the new one caught up.
	var after []int
	for from := joinAt.Add(time.Duration(len(perSec)) * time.Second); !from.Add(time.Second).After(stopAt); from = from.Add(time.Second) {
		after = append(after, count(from))
	}
	mean := 0.0
	for _, n := range before {
		mean += float64(n)
	}
	mean /= float64(len(before))
	ratios := make([]float64, len(perSec))
	for i, n := range perSec {
		ratios[i] = float64(n) / mean
	}
	// The longest time without an acknowledgement: a stall, or a slowdown?
	gap := func(from, to time.Time) (longest time.Duration) {
		last := from
		for _, at := range acks {
			if at.Before(from) || !at.Before(to) {
				continue
			}
			longest, last = max(longest, at.Sub(last)), at
		}
		return max(longest, to.Sub(last))
	}
	t.Logf("member 4 added after %v of load; promoted %v later; primary (member %d) commits per second before %v (mean %.0f), during the join %v = %s of before, after %v; longest pause between acknowledgements before %v, during %v; %d acknowledged, %d unknown, %d refused",
		joinAt.Sub(beforeFrom).Round(time.Millisecond), promotedAt.Sub(joinAt).Round(time.Millisecond), p.id, before, mean, perSec, fmtRatios(ratios), after,
		gap(beforeFrom, joinAt).Round(time.Millisecond), gap(joinAt, promotedAt.Add(time.Second)).Round(time.Millisecond), acked, unknown, refused)
	// CPU per window (ms of CPU per 1 s window; 2,000 is the whole
	// machine): the primary's, member 4's, the other members', the
	// machine's (every process on it).
	nb, nd := len(before), len(perSec)
	othersB, othersD := make([]int, nb), make([]int, nd)
	for _, m := range c.members {
		if m.id == p.id || m.id == m4.id {
			continue
		}
		for i, v := range cpu.perWindow(m.id, beforeFrom, nb) {
			othersB[i] += v
		}
		for i, v := range cpu.perWindow(m.id, joinAt, nd) {
			othersD[i] += v
		}
	}
	t.Logf("CPU ms per window, before | during: primary %v | %v; member 4 %v | %v; the two other members %v | %v; machine %v | %v",
		cpu.perWindow(p.id, beforeFrom, nb), cpu.perWindow(p.id, joinAt, nd),
		cpu.perWindow(m4.id, beforeFrom, nb), cpu.perWindow(m4.id, joinAt, nd),
		othersB, othersD,
		cpu.perWindow(0, beforeFrom, nb), cpu.perWindow(0, joinAt, nd))
	for i, n := range perSec {
		if n == 0 {
			t.Errorf("no commit on the primary in second %d of the join (per second: %v)", i+1, perSec)
		}
	}
	if unknown != 0 || refused != 0 {
		t.Errorf("%d commits of unknown outcome and %d refused, want none: the primary stayed", unknown, refused)
	}
	if !strings.Contains(m4.srv.Stderr(), "installed the group's checkpoint") {
		t.Errorf("member 4 did not install a checkpoint (the log from the start instead?):\n%s", m4.srv.Stderr())
	}

	c.waitConverged()
	b.verify("after member 4 joined")
	c.checkChecksums("after member 4 joined")
	afterRatios := make([]float64, len(after))
	for i, n := range after {
		afterRatios[i] = float64(n) / mean
	}
	return ratios, afterRatios, float64(slices.Min(before)) / mean
}

// profilePrimary takes a CPU profile of the primary for d, after a
// pause of wait, into $LOCKSTEP_JOIN_PROFILE/<round>-<what>.pprof, when
// LOCKSTEP_JOIN_PROFILE names a directory and the members were started
// with LOCKSTEP_PPROF_BASE=N (member i serves pprof on 127.0.0.1:N+i).
// The returned function waits for the profile.
func profilePrimary(t *testing.T, p *member, what string, wait, d time.Duration) func() {
	dir := os.Getenv("LOCKSTEP_JOIN_PROFILE")
	base := envInt(t, "LOCKSTEP_PPROF_BASE", 0)
	if dir == "" || base == 0 {
		return func() {}
	}
	addr := "127.0.0.1:" + strconv.Itoa(base+p.id)
	done := make(chan struct{})
	name := filepath.Join(dir, strings.ReplaceAll(t.Name(), "/", "_")+"-"+what+".pprof")
	go func() {
		defer close(done)
		time.Sleep(wait)
		url := fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", addr, int(d/time.Second))
		resp, err := http.Get(url)
		if err != nil {
			t.Logf("profile %s: %v", what, err)
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Logf("profile %s: %v", what, err)
			return
		}
		if err := os.WriteFile(name, b, 0o644); err != nil {
			t.Logf("profile %s: %v", what, err)
		}
	}()
	return func() { <-done }
}

// globalStatus reads one SHOW GLOBAL STATUS variable of m.
func globalStatus(ctx context.Context, m *member, name string) (int64, error) {
	var k, v string
	if err := m.db.QueryRowContext(ctx, "SHOW GLOBAL STATUS LIKE '"+name+"'").Scan(&k, &v); err != nil {
		return 0, fmt.Errorf("member %d: %s: %w", m.id, name, err)
	}
	return strconv.ParseInt(v, 10, 64)
}

func fmtRatios(rs []float64) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = strconv.FormatFloat(r, 'f', 2, 64)
	}
	return "[" + strings.Join(s, " ") + "]"
}
