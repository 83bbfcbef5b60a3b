package measure

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/steward-oam/steward/bench/record"
)

// fmtStat is a /proc/<pid>/stat line of a process named comm, with its
// ppid and its utime, stime, cutime and cstime.
func fmtStat(pid int, comm string, ppid int, utime, stime, cutime, cstime uint64) string {
	// pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime cutime cstime priority ...
	return fmt.Sprintf("%d (%s) S %d 4242 4242 0 -1 4194560 1200 0 3 0 %d %d %d %d 20 0 12 0 98765 1234567 2048 18446744073709551615\n",
		pid, comm, ppid, utime, stime, cutime, cstime)
}

func TestParseProcStat_SplitsAfterTheLastParenthesis(t *testing.T) {
	st, err := parseProcStat(fmtStat(4242, "steward (eval) 2)", 17, 250, 130, 7, 3))
	if err != nil {
		t.Fatal(err)
	}
	if want := (procStat{pid: 4242, ppid: 17, utime: 250, stime: 130, cutime: 7, cstime: 3}); st != want {
		t.Errorf("parseProcStat = %+v, want %+v", st, want)
	}
	for _, bad := range []string{"", "4242 steward S 1 2 3", "4242 (steward) S 1 2 3 4 5", "x (steward) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15",
		"4242 (steward) S 1 2 3 4 5 6 7 8 9 10 -11 12 13 14 15"} {
		if _, err := parseProcStat(bad); err == nil {
			t.Errorf("parseProcStat(%q) succeeded", bad)
		}
	}
}

// A fake /proc: the controller (100) has an evaluator (101), which has a
// child of its own (102); 200 is someone else's, 103 ended mid-scan.
func TestProcTree_CountsTheControllerItsDescendantsAndTheirReapedChildren(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []struct {
		pid, ppid int
		comm      string
		t         [4]uint64
	}{
		{1, 0, "init", [4]uint64{5, 5, 1000, 1000}},
		{100, 1, "steward", [4]uint64{200, 100, 50, 10}},
		{101, 100, "steward evaluator) (x", [4]uint64{300, 20, 0, 0}},
		{102, 101, "sh", [4]uint64{5, 5, 2, 0}},
		{200, 1, "other", [4]uint64{999, 999, 0, 0}},
	} {
		writeFile(t, filepath.Join(dir, strconv.Itoa(p.pid), "stat"), fmtStat(p.pid, p.comm, p.ppid, p.t[0], p.t[1], p.t[2], p.t[3]))
	}
	if err := os.MkdirAll(filepath.Join(dir, "103"), 0o755); err != nil { // ended: no stat
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "self", "stat"), "not a process")
	tree, err := procTree(dir, 100)
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, st := range tree {
		pids = append(pids, st.pid)
	}
	if !slices.Equal(pids, []int{100, 101, 102}) {
		t.Fatalf("tree = %v, want the controller first, then 101 and 102", pids)
	}
	// Ticks of 10 ms: the controller's 300 + its reaped children's 60, the
	// evaluator's 320, the grandchild's 10 + its reaped child's 2.
	got := treeCPU(tree)
	if want := (CPUTime{Total: 6920 * time.Millisecond, Descendants: 3920 * time.Millisecond}); got != want {
		t.Errorf("treeCPU = %+v, want %+v", got, want)
	}
	if _, err := procTree(dir, 300); err == nil {
		t.Errorf("a process not in /proc has a tree")
	}
}

// On this machine's /proc: a child of the test is in its tree.
func TestProcTree_FindsAChildInProc(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	child := exec.Command("sleep", "10")
	if err := child.Start(); err != nil {
		t.Skip(err)
	}
	defer func() { _ = child.Process.Kill(); _ = child.Wait() }()
	tree, err := procTree(procRoot, os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if tree[0].pid != os.Getpid() || !slices.ContainsFunc(tree, func(st procStat) bool { return st.pid == child.Process.Pid }) {
		t.Errorf("tree %+v lacks the test (first) or its child %d", tree, child.Process.Pid)
	}
}

func TestStatusBytes_ReadsKilobyteLines(t *testing.T) {
	status := "Name:\tsteward\nVmPeak:\t  900 kB\nVmRSS:\t   2048 kB\nRssAnon:\t    1024 kB\nRssFile:\t 1024 kB\n"
	if v, ok, err := statusBytes(status, "VmRSS"); err != nil || !ok || v != 2048*1024 {
		t.Errorf("VmRSS = %v %v %v", v, ok, err)
	}
	if v, ok, err := statusBytes(status, "RssAnon"); err != nil || !ok || v != 1024*1024 {
		t.Errorf("RssAnon = %v %v %v", v, ok, err)
	}
	// A zombie's status has no memory lines.
	if v, ok, err := statusBytes("Name:\tsteward\nState:\tZ (zombie)\n", "VmRSS"); err != nil || ok || v != 0 {
		t.Errorf("zombie VmRSS = %v %v %v", v, ok, err)
	}
	if _, _, err := statusBytes("VmRSS:\tlots kB\n", "VmRSS"); err == nil {
		t.Errorf("a malformed line was accepted")
	}
}

func TestUsageCostSince_DividesTheWindowsCPUByItsReconciles(t *testing.T) {
	base := Usage{cpu: CPUTime{Total: 2 * time.Second, Descendants: time.Second}, reconciles: 100, renders: 100, renderSeconds: 0.5}
	now := Usage{cpu: CPUTime{Total: 8 * time.Second, Descendants: 4 * time.Second}, reconciles: 400, renders: 300, renderSeconds: 1.5}
	c := now.CostSince(base)
	if want := (record.CPUCost{CPUSeconds: 6, ChildCPUSeconds: 3, Reconciles: 300, CPUPerReconcileMs: 20, Renders: 200, RenderMeanSeconds: 0.005}); c != want {
		t.Errorf("costSince = %+v, want %+v", c, want)
	}
	if c.ChildShare() != 0.5 || !c.Measured() {
		t.Errorf("share %v, measured %v", c.ChildShare(), c.Measured())
	}
	// A controller without the render histogram, and an idle window.
	if c := (Usage{cpu: CPUTime{Total: time.Second}}).CostSince(Usage{}); c.CPUPerReconcileMs != 0 || c.RenderMeanSeconds != 0 {
		t.Errorf("costSince without reconciles = %+v", c)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}
