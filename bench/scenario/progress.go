package scenario

import (
	"fmt"
	"time"
)

// Progress lines go to Options.Progress, one per measurement, each with
// the time of day and the scenario and controller it is about. Their
// figures are written as the report writes them: the few formats they use
// repeat those of bench/report/format.go, since the report imports this
// package (for the scenarios' fixtures it describes).

func (s *session) progress(format string, args ...any) {
	s.runner.progress(s.scenario+"/"+s.controller.Name+": "+format, args...)
}

func (r *runner) progress(format string, args ...any) {
	if r.opts.Progress != nil {
		fmt.Fprintf(r.opts.Progress, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
	}
}

const mib = 1 << 20

func mibText(b float64) string { return fmt.Sprintf("%.1f MiB", b/mib) }

// msText writes milliseconds; under 0.1 ms (a render the controller's
// cache answered) in microseconds.
func msText(ms float64) string {
	if ms > 0 && ms < 0.1 {
		return fmt.Sprintf("%.1f µs", ms*1000)
	}
	return fmt.Sprintf("%.2f ms", ms)
}

func bytesText(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.2f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
