package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// envWorker, when set in a process's environment, makes it an evaluator:
// the package's init serves requests on stdin and stdout and exits, before
// main (or a test binary's TestMain) runs. Its value is the workerConfig.
const envWorker = "STEWARD_CUE_EVALUATOR"

// Exit codes of an evaluator.
const (
	// exitMemory: the memory watchdog saw the heap pass the limit.
	exitMemory = 3
	// exitProtocol: a request could not be read.
	exitProtocol = 4
)

// workerConfig is what the controller tells an evaluator it starts.
type workerConfig struct {
	// Memory is the most the evaluator's heap may hold, in bytes.
	Memory int64 `json:"memory"`
	// ObjectBytes and ResponseBytes bound a response: one rendered object,
	// and the whole frame. Zero is unbounded.
	ObjectBytes   int `json:"objectBytes,omitempty"`
	ResponseBytes int `json:"responseBytes,omitempty"`
	// RequestBytes bounds a request frame.
	RequestBytes int `json:"requestBytes"`
	CacheSize    int `json:"cacheSize,omitempty"`
}

func init() {
	raw, ok := os.LookupEnv(envWorker)
	if !ok {
		return
	}
	var cfg workerConfig
	if err := json.Unmarshal([]byte(raw), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "steward cue evaluator: bad %s: %v\n", envWorker, err)
		os.Exit(exitProtocol)
	}
	os.Exit(serve(cfg, os.Stdin, os.Stdout))
}

// serve is an evaluator's life: bound itself, then answer requests until
// stdin closes. It returns the exit code.
func serve(cfg workerConfig, in io.Reader, out io.Writer) int {
	bound(cfg)
	local := cueeval.NewLocal(cfg.CacheSize)
	r := bufio.NewReaderSize(in, 64<<10)
	dog := &watchdog{limit: uint64(cfg.Memory)}
	for {
		var req cueeval.Request
		if err := readFrame(r, cfg.RequestBytes, &req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(os.Stderr, "steward cue evaluator: reading a request: %v\n", err)
			return exitProtocol
		}
		dog.start()
		res, err := local.Evaluate(&req)
		dog.stop()
		frame := answer(cfg, res, err)
		if _, err := out.Write(frame); err != nil {
			return 0 // the controller is gone
		}
		// Compiled sources are what a long-lived evaluator holds; when they
		// take half its memory, drop them rather than fail an evaluation.
		if liveHeap() > uint64(cfg.Memory)/2 {
			local.Purge()
			runtime.GC()
		}
	}
}

// answer encodes the response to one request, held to the output limits.
func answer(cfg workerConfig, res *cueeval.Response, err error) []byte {
	if err != nil {
		ee := &cueeval.Error{Reason: v1beta1.ReasonRenderFailed, Message: err.Error()}
		errors.As(err, &ee)
		res = &cueeval.Response{Err: ee}
	} else if be := checkObjects(cfg, res.Render); be != nil {
		res = &cueeval.Response{Cache: res.Cache, Budget: be}
	}
	frame, err := encodeFrame(res)
	if err != nil {
		frame, _ = encodeFrame(&cueeval.Response{Err: &cueeval.Error{Reason: v1beta1.ReasonRenderFailed, Message: "encoding the result: " + err.Error()}})
		return frame
	}
	if cfg.ResponseBytes > 0 && len(frame) > cfg.ResponseBytes {
		frame, _ = encodeFrame(&cueeval.Response{Cache: res.Cache, Budget: &cueeval.BudgetError{Limit: cueeval.LimitRenderBytes,
			Budget: cueeval.FormatBytes(int64(cfg.ResponseBytes)),
			Detail: fmt.Sprintf("one evaluation produced %s", cueeval.FormatBytes(int64(len(frame))))}})
	}
	return frame
}

// checkObjects holds each rendered object to the object size limit.
func checkObjects(cfg workerConfig, r *cueeval.Rendered) *cueeval.BudgetError {
	if r == nil || cfg.ObjectBytes <= 0 {
		return nil
	}
	check := func(what string, obj []byte) *cueeval.BudgetError {
		if len(obj) <= cfg.ObjectBytes {
			return nil
		}
		return &cueeval.BudgetError{Limit: cueeval.LimitObjectBytes, Budget: cueeval.FormatBytes(int64(cfg.ObjectBytes)),
			Detail: fmt.Sprintf("%s is %s", what, cueeval.FormatBytes(int64(len(obj))))}
	}
	if be := check("output", r.Output); be != nil {
		return be
	}
	for _, o := range r.Outputs {
		if be := check("outputs."+o.Name, o.Object); be != nil {
			return be
		}
	}
	return nil
}

// bound limits this process: a soft heap limit the collector works to
// keep, a stack limit that stops runaway recursion, an address-space
// limit that makes a single huge allocation fail at once, and a high OOM
// score, so that when a container's memory runs out the kernel takes an
// evaluator before the controller.
func bound(cfg workerConfig) {
	runtime.GOMAXPROCS(min(2, runtime.NumCPU()))
	// An evaluator's heap is small (its compiled templates, ~10 MiB) and
	// every evaluation makes garbage: collecting at three times the live
	// heap rather than twice costs ~5 MiB and saves a third of its CPU
	// (BenchmarkRender_WarmCache_Sandbox). The memory limit below bounds
	// it either way.
	debug.SetGCPercent(200)
	if cfg.Memory <= 0 {
		return
	}
	debug.SetMemoryLimit(cfg.Memory * 3 / 4)
	debug.SetMaxStack(int(min(max(cfg.Memory/4, 16<<20), 256<<20)))
	_ = os.WriteFile("/proc/self/oom_score_adj", []byte("1000"), 0)
	if size := addressSpace(); size > 0 {
		// What the process has reserved so far (the runtime reserves far
		// more address space than it uses) plus room for the heap.
		limit := uint64(size) + uint64(cfg.Memory) + 256<<20
		_ = syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: limit, Max: limit})
	}
}

// addressSpace is the process's virtual memory size in bytes (VmSize),
// or 0 when /proc cannot tell.
func addressSpace() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		rest, ok := strings.CutPrefix(line, "VmSize:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// watchdog ends the process when the heap passes the limit during an
// evaluation: the collector cannot free what the evaluation holds, and
// an evaluation cannot be stopped from outside.
type watchdog struct {
	limit uint64
	busy  atomic.Bool
}

// watchdogPeriod is how often the heap is read while an evaluation runs.
const watchdogPeriod = 5 * time.Millisecond

func (w *watchdog) start() {
	if w.limit == 0 {
		return
	}
	w.busy.Store(true)
	time.AfterFunc(watchdogPeriod, w.check)
}

func (w *watchdog) stop() { w.busy.Store(false) }

func (w *watchdog) check() {
	if !w.busy.Load() {
		return
	}
	if heap := heapObjects(); heap > w.limit {
		fmt.Fprintf(os.Stderr, "steward cue evaluator: heap %d bytes is over the memory limit of %d bytes\n", heap, w.limit)
		os.Exit(exitMemory)
	}
	time.AfterFunc(watchdogPeriod, w.check)
}

var heapSamples = []metrics.Sample{
	{Name: "/memory/classes/heap/objects:bytes"},
	{Name: "/gc/heap/live:bytes"},
}

// heapObjects is the heap held by objects, live or not yet swept.
func heapObjects() uint64 { return readMetric(0) }

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 { return readMetric(1) }

func readMetric(i int) uint64 {
	s := []metrics.Sample{heapSamples[i]}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
