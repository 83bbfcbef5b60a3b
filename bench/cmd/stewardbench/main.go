package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/steward-oam/steward/bench/measure"
	"github.com/steward-oam/steward/bench/record"
	"github.com/steward-oam/steward/bench/report"
	"github.com/steward-oam/steward/bench/scenario"
)

const (
	stewardCommand = "bin/steward controller --metrics-addr={metrics-addr} --pprof-addr={pprof-addr} --health-addr=0 --kube-api-qps={qps} --kube-api-burst={burst} --egress-allow=127.0.0.1/32"
	ownsCommand    = "bin/owns --metrics-addr={metrics-addr} --pprof-addr={pprof-addr} --health-addr=0 --kube-api-qps={qps} --kube-api-burst={burst}"
)

var (
	// steward is Steward in timer mode; steward-watch the same binary in
	// watch mode, its default (issue 12); steward-csa is timer mode with
	// KubeVela's client-side apply, beside steward's server-side apply
	// (issue 31). Each names its mode: the report tells them apart by the
	// flags.
	defaultControllers = []string{"steward=" + stewardCommand + " --drift-detection=timer", "steward-watch=" + stewardCommand + " --drift-detection=watch",
		"steward-csa=" + stewardCommand + " --drift-detection=timer --apply-method=client-side", "owns=" + ownsCommand}
	defaultVariants = []string{
		"steward-uncompressed=" + stewardCommand + " --resource-tracker-compression=",
		"steward-gzip=" + stewardCommand + " --resource-tracker-compression=gzip",
	}
)

type flags struct {
	profile     string
	controllers []string
	variants    []string
	scenarios   []string
	binDir      string
	crdDir      string
	definitions []string
	qps         float64
	burst       int
	resultsDir  string
	docs        string
	imgDir      string
	reportOnly  string
	soakApps    int
	soakFor     time.Duration
	soakBefore  string
	merge       bool
	note        string
}

func main() {
	f := flags{}
	fs := pflag.NewFlagSet("stewardbench", pflag.ExitOnError)
	fs.StringVar(&f.profile, "profile", "quick", "Scenario sizes: quick (about 25 minutes with the four default controllers) or full (the sizes of issues 7, 10 and 12).")
	fs.StringArrayVar(&f.controllers, "controller", defaultControllers, "Controller under test, as name=command line (repeatable); the command must contain {metrics-addr} and may use {qps} and {burst}.")
	fs.StringArrayVar(&f.variants, "bigapp-variant", defaultVariants, "Extra controller measured in the big-app scenario only, as name=command line (repeatable).")
	fs.StringSliceVar(&f.scenarios, "scenarios", nil, fmt.Sprintf("Scenarios to run (default all): %s.", strings.Join(record.AllScenarios, ", ")))
	fs.StringVar(&f.binDir, "bin-dir", envOr("KUBEBUILDER_ASSETS", "bin/k8s"), "Directory of kube-apiserver and etcd.")
	fs.StringVar(&f.crdDir, "crd-dir", "config/crd", "CRDs to install.")
	fs.StringSliceVar(&f.definitions, "definitions", []string{"config/definitions", "bench/definitions"}, "Definition directories applied to vela-system; the benchmark Applications use the bench-service ComponentDefinition.")
	fs.Float64Var(&f.qps, "qps", 100, "Client QPS given to every controller ({qps}); the fleet's lower bound divides by it.")
	fs.IntVar(&f.burst, "burst", 200, "Client burst given to every controller ({burst}).")
	fs.StringVar(&f.resultsDir, "results-dir", "bench/results", "Where <timestamp>.json, latest.json and controller logs go.")
	fs.StringVar(&f.docs, "docs", "docs/benchmarks.md", "Markdown report to regenerate; empty skips it.")
	fs.StringVar(&f.imgDir, "img-dir", "docs/img", "Where the report's charts go.")
	fs.StringVar(&f.reportOnly, "report-only", "", "Regenerate the report from this results file without running anything.")
	fs.IntVar(&f.soakApps, "soak-apps", 0, "Applications in the soak scenario (default: the profile's).")
	fs.DurationVar(&f.soakFor, "soak-duration", 0, "How long the soak scenario runs (default: the profile's).")
	fs.StringVar(&f.soakBefore, "soak-before", "bench/results/soak-before.json", "Results of an earlier soak the report shows next to this one (ignored when the file does not exist).")
	fs.BoolVar(&f.merge, "merge", false, "Keep the scenarios this run skips from the previous latest.json, so that one scenario can be re-run without losing the others in the report.")
	fs.StringVar(&f.note, "note", "", "What this run measures, e.g. the code before a fix; shown in the report.")
	_ = fs.Parse(os.Args[1:])
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr)))
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "stewardbench:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	if f.reportOnly != "" {
		res, err := record.Read(f.reportOnly)
		if err == nil {
			err = fillProfiles(res, f.reportOnly)
		}
		if err != nil {
			return err
		}
		return writeReport(f, res, f.reportOnly)
	}
	opts, err := options(f)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, runErr := scenario.Run(ctx, opts)
	if res == nil {
		return runErr
	}
	res.Note = f.note
	if err := addSoakBefore(res, f.soakBefore); err != nil {
		return err
	}
	path := filepath.Join(f.resultsDir, res.Started.Format("20060102T150405Z")+".json")
	if err := res.WriteJSON(path); err != nil {
		return err
	}
	if runErr != nil {
		return fmt.Errorf("%w (partial results in %s)", runErr, path)
	}
	// The budget is checked on this run's figures, not on those a merge
	// keeps from earlier runs.
	over := report.OverBudget(res)
	latest := filepath.Join(f.resultsDir, "latest.json")
	// A run of the default scenarios keeps the opt-in ones (scale) from
	// the previous results; --merge keeps every scenario it did not run.
	if ran := opts.Scenarios; f.merge || len(ran) == 0 {
		if len(ran) == 0 {
			ran = record.AllScenarios
		}
		if prev, err := record.Read(latest); err == nil {
			res = record.Merge(prev, res, ran)
		}
	}
	if err := res.WriteJSON(latest); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "results: %s (%s)\n", path, res.Elapsed.D().Round(time.Second))
	if err := writeReport(f, res, latest); err != nil {
		return err
	}
	if len(over) > 0 {
		fmt.Fprintf(os.Stderr, "\n*** OVER BUDGET by more than %.0f%% (docs/benchmarks.md#budget) ***\n", report.BudgetTolerance*100)
		for _, o := range over {
			fmt.Fprintf(os.Stderr, "*** %s\n", o)
		}
		fmt.Fprintln(os.Stderr)
	}
	if len(res.Errors) > 0 {
		return fmt.Errorf("%d scenarios failed: %s", len(res.Errors), strings.Join(res.Errors, "; "))
	}
	if len(over) > 0 {
		return fmt.Errorf("%d figures over budget", len(over))
	}
	return nil
}

// addSoakBefore attaches the soak of an earlier results file to res.
func addSoakBefore(res *record.Results, path string) error {
	if path == "" || len(res.Soak) == 0 {
		return nil
	}
	before, err := record.Read(path)
	if os.IsNotExist(errors.Unwrap(err)) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(before.Soak) == 0 {
		return nil
	}
	label := before.Note
	if label == "" {
		label = "commit " + before.Host.Commit
	}
	res.SoakBefore = &record.SoakReference{Label: label, Commit: before.Host.Commit, Started: before.Started, Soak: before.Soak}
	return nil
}

// writeReport regenerates the Markdown report unless --docs is empty.
func writeReport(f flags, res *record.Results, source string) error {
	if f.docs == "" {
		return nil
	}
	if err := report.Write(res, f.docs, f.imgDir, source); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "report: %s\n", f.docs)
	return nil
}

func options(f flags) (scenario.Options, error) {
	profile, err := record.ProfileNamed(f.profile)
	if err != nil {
		return scenario.Options{}, err
	}
	opts := scenario.Options{
		Profile: profile, Scenarios: f.scenarios, BinDir: abs(f.binDir), CRDDir: abs(f.crdDir),
		QPS: f.qps, Burst: f.burst, Progress: os.Stderr,
		LogDir: filepath.Join(f.resultsDir, "logs", time.Now().UTC().Format("20060102T150405Z")),
	}
	if f.soakApps > 0 {
		opts.Profile.Soak.Apps = f.soakApps
	}
	if f.soakFor > 0 {
		opts.Profile.Soak.Duration = record.Duration(f.soakFor)
	}
	for _, d := range f.definitions {
		opts.DefinitionDirs = append(opts.DefinitionDirs, abs(d))
	}
	if opts.Controllers, err = parseControllers(f.controllers); err != nil {
		return opts, err
	}
	if opts.BigAppVariants, err = parseControllers(f.variants); err != nil {
		return opts, err
	}
	return opts, nil
}

func parseControllers(values []string) ([]record.Controller, error) {
	var out []record.Controller
	for _, v := range values {
		c, err := record.ParseController(v)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// fillProfiles summarises the CPU and heap profiles of results read from path
// that a run wrote before it summarised them itself, and writes the
// summaries back.
func fillProfiles(res *record.Results, path string) error {
	before, err := json.Marshal(res)
	if err != nil {
		return err
	}
	measure.FillProfiles(res)
	after, err := json.Marshal(res)
	if err != nil || string(after) == string(before) {
		return err
	}
	return res.WriteJSON(path)
}
