package group

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cpuSampler records the CPU time (user + system) of each member's
// process, and the machine's busy time, every sampleEvery, so that a test
// can say how much CPU each member used in a window: on one machine all
// members share its CPUs, and a slower primary may be its own work or a
// busier neighbour (docs/benchmarks/notes.md, "fourth member joins").
type cpuSampler struct {
	mu      sync.Mutex
	samples map[int][]cpuSample // by member id; id 0: the whole machine (busy)
	stop    chan struct{}
	done    chan struct{}
}

type cpuSample struct {
	at  time.Time
	cpu time.Duration
}

const sampleEvery = 50 * time.Millisecond

// clockTick is the kernel's USER_HZ, which /proc reports times in (100 on
// every Linux this runs on).
const clockTick = 10 * time.Millisecond

// startCPUSampler samples the members of c that are running (as c changes)
// until stop.
func startCPUSampler(c *cluster) *cpuSampler {
	s := &cpuSampler{samples: map[int][]cpuSample{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tk := time.NewTicker(sampleEvery)
		defer tk.Stop()
		for {
			now := time.Now()
			pids := map[int]int{}
			for _, m := range c.members {
				if srv := m.srv; srv != nil {
					pids[m.id] = srv.PID()
				}
			}
			s.mu.Lock()
			for id, pid := range pids {
				if d, err := procCPU(pid); err == nil {
					s.samples[id] = append(s.samples[id], cpuSample{now, d})
				}
			}
			if d, err := machineBusy(); err == nil {
				s.samples[0] = append(s.samples[0], cpuSample{now, d})
			}
			s.mu.Unlock()
			select {
			case <-s.stop:
				return
			case <-tk.C:
			}
		}
	}()
	return s
}

func (s *cpuSampler) close() {
	close(s.stop)
	<-s.done
}

// in is the CPU member id (0: the machine, all processes) used in [from,
// to), from the samples nearest the window's ends; -1 if not sampled.
func (s *cpuSampler) in(id int, from, to time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	ss := s.samples[id]
	at := func(t time.Time) (time.Duration, bool) {
		for i, x := range ss {
			if !x.at.Before(t) {
				if i == 0 && x.at.Sub(t) > 2*sampleEvery {
					return 0, false
				}
				return x.cpu, true
			}
		}
		return 0, false
	}
	a, ok1 := at(from)
	b, ok2 := at(to)
	if !ok1 || !ok2 {
		return -1
	}
	return b - a
}

// perWindow is the CPU (ms) member id used in each 1 s window from from.
func (s *cpuSampler) perWindow(id int, from time.Time, n int) []int {
	out := make([]int, n)
	for i := range out {
		f := from.Add(time.Duration(i) * time.Second)
		out[i] = int(s.in(id, f, f.Add(time.Second)) / time.Millisecond)
	}
	return out
}

// procCPU is a process's CPU time so far (user + system).
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces: fields count from the
	// closing parenthesis.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	// f[0] is field 3 (state): utime is field 14, stime 15.
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad times", pid)
	}
	return time.Duration(ut+st) * clockTick, nil
}

// machineBusy is the CPU time all CPUs spent not idle so far.
func machineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, fmt.Errorf("/proc/stat: %q", line)
	}
	var busy int64
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("/proc/stat: %q", line)
		}
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		busy += n
	}
	return time.Duration(busy) * clockTick, nil
}
