package measure

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// A controller may do part of its work in processes it starts (Steward
// evaluates all CUE in evaluators, children started from its own binary),
// so the harness reads CPU and memory of the controller's whole process
// tree from /proc (Linux), the same way for every controller.

// procRoot is where the process tree is read from.
const procRoot = "/proc"

// clockTicks is USER_HZ, the unit of the times in /proc/<pid>/stat: 100 on
// every Linux architecture (what getconf CLK_TCK prints), whatever the
// kernel's own tick rate.
const clockTicks = 100

// procStat is what the harness reads of one /proc/<pid>/stat line.
type procStat struct {
	pid, ppid int
	// utime and stime are the process's own CPU time, all its threads;
	// cutime and cstime are those of the children it has waited for
	// (reaped), with what they had reaped in turn. In clock ticks.
	utime, stime, cutime, cstime uint64
}

// parseProcStat parses a /proc/<pid>/stat line. Its second field is the
// command name in parentheses, which may itself hold spaces and
// parentheses, so the other fields are split after the last ')'.
func parseProcStat(line string) (procStat, error) {
	open, end := strings.IndexByte(line, '('), strings.LastIndexByte(line, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("stat line %q: no (command)", line)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line[:open]))
	if err != nil {
		return procStat{}, fmt.Errorf("stat line %q: pid: %w", line, err)
	}
	// From the third field (state) on: ppid is the 4th, utime, stime,
	// cutime and cstime the 14th to the 17th.
	f := strings.Fields(line[end+1:])
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("stat line %q: %d fields after the command, want at least 15", line, len(f))
	}
	st := procStat{pid: pid}
	if st.ppid, err = strconv.Atoi(f[1]); err != nil {
		return procStat{}, fmt.Errorf("stat line %q: ppid: %w", line, err)
	}
	for i, dst := range []*uint64{&st.utime, &st.stime, &st.cutime, &st.cstime} {
		if *dst, err = strconv.ParseUint(f[11+i], 10, 64); err != nil {
			return procStat{}, fmt.Errorf("stat line %q: field %d: %w", line, 14+i, err)
		}
	}
	return st, nil
}

// procTree reads every process's stat under dir and returns root's and
// those of its descendants (found by their ppid chains), root first. A
// process that ends during the scan is left out.
func procTree(dir string, root int) ([]procStat, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	children := map[int][]procStat{}
	var tree []procStat
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "stat"))
		if err != nil {
			continue // it ended meanwhile
		}
		st, err := parseProcStat(strings.TrimSpace(string(data)))
		if err != nil {
			return nil, err
		}
		if st.pid == root {
			tree = append(tree, st)
		} else {
			children[st.ppid] = append(children[st.ppid], st)
		}
	}
	if len(tree) == 0 {
		return nil, fmt.Errorf("process %d: not in %s", root, dir)
	}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i].pid]...)
	}
	return tree, nil
}

// CPUTime is the CPU time, user and system, a controller's process tree has
// used since the controller started.
type CPUTime struct {
	// Total is the controller's own and its descendants'.
	Total time.Duration
	// Descendants is the part of Total its descendants used: those alive
	// (their own time and their reaped children's) and those the
	// controller has already reaped (its cutime and cstime).
	Descendants time.Duration
}

// treeCPU adds up the CPU of a tree from procTree. A descendant that is
// reaped between the reads of its stat and of its parent's can be counted
// twice or not at all; evaluators end rarely (a budget hit, a shutdown),
// so the error is one evaluator's time at most.
func treeCPU(tree []procStat) CPUTime {
	ticks := func(n uint64) time.Duration { return time.Duration(n) * time.Second / clockTicks }
	var c CPUTime
	for i, st := range tree {
		c.Total += ticks(st.utime + st.stime + st.cutime + st.cstime)
		if i == 0 {
			c.Descendants += ticks(st.cutime + st.cstime)
		} else {
			c.Descendants += ticks(st.utime + st.stime + st.cutime + st.cstime)
		}
	}
	return c
}

// CPU reads the CPU time of the controller's process tree from /proc.
func (p *Process) CPU() (CPUTime, error) {
	tree, err := procTree(procRoot, p.cmd.Process.Pid)
	if err != nil {
		return CPUTime{}, fmt.Errorf("controller %s: CPU: %w", p.Name, err)
	}
	return treeCPU(tree), nil
}

// ChildMemory is the memory of a controller's descendants at one moment.
type ChildMemory struct {
	Processes int
	// RSS sums their VmRSS. It counts the pages they share (the binary,
	// shared libraries) once per process.
	RSS float64
	// RSSAnon sums their RssAnon: anonymous memory (heaps, stacks), which
	// processes started with exec do not share.
	RSSAnon float64
}

// ChildMemory reads the memory of the controller's descendants from /proc.
func (p *Process) ChildMemory() (ChildMemory, error) {
	tree, err := procTree(procRoot, p.cmd.Process.Pid)
	if err != nil {
		return ChildMemory{}, fmt.Errorf("controller %s: child memory: %w", p.Name, err)
	}
	var m ChildMemory
	for _, st := range tree[1:] {
		data, err := os.ReadFile(filepath.Join(procRoot, strconv.Itoa(st.pid), "status"))
		if errors.Is(err, os.ErrNotExist) {
			continue // it ended meanwhile
		} else if err != nil {
			return ChildMemory{}, fmt.Errorf("controller %s: child memory: %w", p.Name, err)
		}
		m.Processes++
		// A zombie has neither line: it holds no memory any more.
		rss, _, err := statusBytes(string(data), "VmRSS")
		if err != nil {
			return ChildMemory{}, err
		}
		anon, _, err := statusBytes(string(data), "RssAnon")
		if err != nil {
			return ChildMemory{}, err
		}
		m.RSS += rss
		m.RSSAnon += anon
	}
	return m, nil
}

// statusBytes reads a "Name:   1234 kB" line of /proc/<pid>/status; false
// when there is none.
func statusBytes(status, name string) (float64, bool, error) {
	for _, line := range strings.Split(status, "\n") {
		if rest, ok := strings.CutPrefix(line, name+":"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			if err != nil {
				return 0, true, fmt.Errorf("%s %q: %w", name, rest, err)
			}
			return kb * 1024, true, nil
		}
	}
	return 0, false, nil
}
