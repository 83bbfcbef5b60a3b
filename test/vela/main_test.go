package vela

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/internal/localcp"
)

// root is the repository root, from this package's directory.
var root = filepath.Join("..", "..")

// velaBin is KubeVela's CLI (VELA_BIN); stewardBin is built by TestMain.
var velaBin, stewardBin string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	velaBin = os.Getenv("VELA_BIN")
	if velaBin == "" {
		// Opt-in: the tests skip themselves and say how to run them.
		return m.Run()
	}
	abs, err := filepath.Abs(velaBin)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	velaBin = abs
	dir, err := os.MkdirTemp("", "steward-vela-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	stewardBin = filepath.Join(dir, "steward")
	build := exec.Command("go", "build", "-o", stewardBin, "../../cmd/steward")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building steward:", err)
		return 1
	}
	return m.Run()
}

// env is one local plane with Steward running on it, and a HOME of its own
// for the CLI (~/.vela).
type env struct {
	t          *testing.T
	c          client.Client
	kubeconfig string
	home       string
}

// start starts the plane and the controller, or skips the test when
// VELA_BIN is not set.
func start(t *testing.T) *env {
	t.Helper()
	if velaBin == "" {
		t.Skip("VELA_BIN is not set: run `make test-vela` (builds KubeVela's CLI into bin/vela with hack/install-vela.sh)")
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		assets = filepath.Join(root, "bin", "k8s")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := localcp.Start(ctx, localcp.Options{
		BinDir:           assets,
		CRDDir:           filepath.Join(root, "config", "crd"),
		DefinitionsDir:   filepath.Join(root, "config", "definitions"),
		KubeVelaToolsDir: filepath.Join(root, "config", "kubevela"),
		KubeconfigPath:   filepath.Join(dir, "kubeconfig"),
		StartTimeout:     3 * time.Minute,
		Progress:         testWriter{t},
	})
	if err != nil {
		t.Fatalf("starting the local plane: %v", err)
	}
	t.Cleanup(func() {
		if err := cp.Stop(); err != nil {
			t.Errorf("stopping the plane: %v", err)
		}
	})
	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, c: c, kubeconfig: cp.KubeconfigPath, home: filepath.Join(dir, "home")}
	if err := os.MkdirAll(e.home, 0o700); err != nil {
		t.Fatal(err)
	}
	e.startController(filepath.Join(dir, "steward.log"))
	return e
}

// startController runs `steward controller` against the plane until the
// test ends; its log is printed when the test fails.
func (e *env) startController(logPath string) {
	t := e.t
	logFile, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(stewardBin, "controller", "--metrics-addr=0", "--health-addr=0", "--zap-log-level=1")
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting steward: %v", err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logFile.Close()
		if t.Failed() {
			if b, err := os.ReadFile(logPath); err == nil {
				t.Logf("steward log (last 60 lines):\n%s", tail(string(b), 60))
			}
		}
	})
}

// vela runs KubeVela's CLI with the plane's kubeconfig and returns what it
// printed, stdout and stderr together.
func (e *env) vela(args ...string) (string, error) {
	e.t.Helper()
	return e.velaWithin(4*time.Minute, args...)
}

// velaWithin is vela, killing the CLI after timeout (for verbs that
// follow, such as logs).
func (e *env) velaWithin(timeout time.Duration, args ...string) (string, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, velaBin, args...)
	cmd.Dir = "."
	cmd.Env = append(os.Environ(), "KUBECONFIG="+e.kubeconfig, "HOME="+e.home)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Stdin = nil
	start := time.Now()
	err := cmd.Run()
	e.t.Logf("$ vela %s   (%.1fs, %v)\n%s", strings.Join(args, " "), time.Since(start).Seconds(), exitOf(err), out.String())
	return out.String(), err
}

// mustVela is vela, failing the test when the CLI fails.
func (e *env) mustVela(args ...string) string {
	e.t.Helper()
	out, err := e.vela(args...)
	if err != nil {
		e.t.Fatalf("vela %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func exitOf(err error) string {
	if err == nil {
		return "exit 0"
	}
	return err.Error()
}

var (
	appGVK  = schema.GroupVersionKind{Group: "core.oam.dev", Version: "v1beta1", Kind: "Application"}
	revGVK  = schema.GroupVersionKind{Group: "core.oam.dev", Version: "v1beta1", Kind: "ApplicationRevision"}
	deplGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	cmGVK   = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

// get reads an object, nil when it cannot.
func (e *env) get(gvk schema.GroupVersionKind, ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	if err := e.c.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, u); err != nil {
		return nil
	}
	return u
}

// eventually polls cond every second until it holds or timeout passes;
// cond returns what it saw, for the failure message.
func (e *env) eventually(timeout time.Duration, what string, cond func() (bool, string)) {
	e.t.Helper()
	deadline := time.Now().Add(timeout)
	var seen string
	for {
		var ok bool
		ok, seen = cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within %s; last seen: %s", what, timeout, seen)
		}
		time.Sleep(time.Second)
	}
}

// waitApp waits until the Application is running at its current
// generation and its Deployment's TARGET env is target.
func (e *env) waitApp(ns, name, target string) {
	e.t.Helper()
	e.eventually(3*time.Minute, fmt.Sprintf("Application %s/%s running with TARGET=%s", ns, name, target), func() (bool, string) {
		app := e.get(appGVK, ns, name)
		if app == nil {
			return false, "no Application"
		}
		phase, _, _ := unstructured.NestedString(app.Object, "status", "status")
		observed, _, _ := unstructured.NestedInt64(app.Object, "status", "observedGeneration")
		got := e.deploymentTarget(ns, "web")
		return phase == "running" && observed == app.GetGeneration() && got == target,
			fmt.Sprintf("phase %q, observedGeneration %d of %d, TARGET %q", phase, observed, app.GetGeneration(), got)
	})
}

// deploymentTarget is the TARGET env of the Deployment's first container.
func (e *env) deploymentTarget(ns, name string) string {
	d := e.get(deplGVK, ns, name)
	if d == nil {
		return ""
	}
	containers, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "containers")
	if len(containers) == 0 {
		return ""
	}
	envs, _, _ := unstructured.NestedSlice(containers[0].(map[string]any), "env")
	for _, v := range envs {
		if m, ok := v.(map[string]any); ok && m["name"] == "TARGET" {
			s, _ := m["value"].(string)
			return s
		}
	}
	return ""
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// testWriter prints the plane's progress lines in the test log.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
