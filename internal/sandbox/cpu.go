package sandbox

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the unit of /proc/<pid>/stat's CPU times (USER_HZ, 100 on
// every Linux architecture Go supports).
const clockTick = 10 * time.Millisecond

// CPUTime is the CPU time the pool's evaluators have used, the ended ones
// included: what evaluating CUE costs on top of the controller's own
// process_cpu_seconds_total.
func (p *Pool) CPUTime() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	total := p.endedCPU
	for w := range p.all {
		total += w.cpuTime()
	}
	return total
}

// cpuTime is the CPU time of a live process from /proc, or of an ended
// one from its reaped state.
func (w *worker) cpuTime() time.Duration {
	if !w.alive() {
		if w.state == nil {
			return 0
		}
		return w.state.UserTime() + w.state.SystemTime()
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(w.cmd.Process.Pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// fields count from the last ')'.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	// utime and stime are fields 14 and 15, that is 11 and 12 after ')'.
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+st) * clockTick
}
