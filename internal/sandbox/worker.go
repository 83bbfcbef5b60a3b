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
	"syscall"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/cueeval"
)

// A process started with workerArg as its only argument and envWorker in
// its environment is an evaluator: the package's init serves requests on
// stdin and stdout and exits, before main (or a test binary's TestMain)
// runs. Both are needed, so that neither a stray environment variable nor
// an argument makes a controller an evaluator. envWorker's value is the
// workerConfig.
const (
	envWorker = "STEWARD_CUE_EVALUATOR"
	workerArg = "__steward-cue-evaluator__"
)

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
	RenderBytes   int `json:"renderBytes,omitempty"`
	// RequestBytes bounds a request frame.
	RequestBytes int `json:"requestBytes"`
	CacheSize    int `json:"cacheSize,omitempty"`
}

func init() {
	raw, ok := os.LookupEnv(envWorker)
	if !ok || len(os.Args) != 2 || os.Args[1] != workerArg {
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
	if cfg.Memory > 0 {
		watchHeap(uint64(cfg.Memory))
	}
	for {
		var req cueeval.Request
		if err := readFrame(r, cfg.RequestBytes, &req); err != nil {
			if errors.Is(err, io.EOF) {
				return 0
			}
			fmt.Fprintf(os.Stderr, "steward cue evaluator: reading a request: %v\n", err)
			return exitProtocol
		}
		res, err := local.Evaluate(&req)
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
			Budget: cueeval.FormatBytes(int64(cfg.RenderBytes)),
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
	// One evaluation at a time, on one thread: a second would only spin
	// looking for work each time a request wakes the process.
	runtime.GOMAXPROCS(1)
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

// watchHeap ends the process when a collection finds more live heap than
// the limit: the collector cannot free what an evaluation holds, and an
// evaluation cannot be stopped from outside. It runs at the end of every
// collection (a finalizer armed again each cycle), so it costs nothing
// while the evaluator is idle: no timer wakes it. The soft memory limit
// makes collections come more often as the heap nears the limit, and the
// address-space limit stops an allocation too large to wait for one.
func watchHeap(limit uint64) {
	type sentinel struct{ _ [64]byte } // not a tiny allocation: its finalizer runs
	var arm func()
	arm = func() {
		runtime.SetFinalizer(&sentinel{}, func(*sentinel) {
			if live := liveHeap(); live > limit {
				fmt.Fprintf(os.Stderr, "steward cue evaluator: live heap %d bytes is over the memory limit of %d bytes\n", live, limit)
				os.Exit(exitMemory)
			}
			arm()
		})
	}
	arm()
}

var heapSamples = []metrics.Sample{
	{Name: "/gc/heap/live:bytes"},
}

// liveHeap is the heap the last collection found live.
func liveHeap() uint64 {
	s := []metrics.Sample{heapSamples[0]}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
