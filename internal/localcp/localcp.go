/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package localcp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// kubeconfigMarker starts every kubeconfig Start writes, so Start never
// overwrites a kubeconfig it did not write (say, ~/.kube/config passed by
// mistake) and a file left by a killed run is recognised as ours.
const kubeconfigMarker = "# Written by steward dev for its local control plane; deleted when it stops.\n"

// stopTimeout bounds how long a component may take to exit on SIGTERM
// before it is killed.
const stopTimeout = 10 * time.Second

// Options say where the plane finds its binaries and what it installs.
// Relative paths are resolved against the working directory; `make run`
// runs from the repository root, where the defaults point.
type Options struct {
	// BinDir holds kube-apiserver, etcd, kube-controller-manager,
	// kube-scheduler and kwok. Defaults to $KUBEBUILDER_ASSETS when set,
	// else bin/k8s (built by `make tools`).
	BinDir string
	// CRDDir holds the CRDs to install. Defaults to config/crd; it must exist.
	CRDDir string
	// DefinitionsDir holds definition objects to apply (see ApplyDefinitions).
	// Defaults to config/definitions; a missing or empty dir installs none.
	DefinitionsDir string
	// DefinitionNamespace receives the namespaced definitions that name no
	// namespace. Defaults to vela-system; match the controller's
	// --system-definition-namespace.
	DefinitionNamespace string
	// KubeVelaToolsDir holds what KubeVela's own CLI reads from vela-system
	// (query views, the version marker `vela addon enable` checks), applied
	// after the definitions. Defaults to config/kubevela; may be missing.
	KubeVelaToolsDir string
	// KubeconfigPath is where the admin kubeconfig is written. Defaults to
	// .local/kubeconfig.
	KubeconfigPath string
	// StartTimeout bounds each step of the start: etcd, kube-apiserver, the
	// controllers' health, the node becoming Ready. Defaults to one minute:
	// the apiserver is slow on a busy laptop.
	StartTimeout time.Duration
	// AttachOutput copies the logs of every component to stdout/stderr.
	// Without it, kube-controller-manager, kube-scheduler and kwok log to
	// files in ControlPlane.LogDir, and etcd and kube-apiserver nowhere.
	AttachOutput bool
	// Progress receives one line per step of the start as it completes
	// (etcd up, API server up, ...). Nil prints nothing.
	Progress io.Writer
}

// ControlPlane is a running local control plane: etcd, kube-apiserver,
// kube-controller-manager, kube-scheduler, and kwok playing the kubelet of
// one node (NodeName), so Deployments get Pods that become Ready.
type ControlPlane struct {
	// Config talks to the apiserver as a member of system:masters.
	Config *rest.Config
	// KubeconfigPath is the absolute path of a kubeconfig with the same
	// credentials as Config, for kubectl.
	KubeconfigPath string
	// Definitions is the number of definition objects applied at start.
	Definitions int
	// LogDir holds the logs of kube-controller-manager, kube-scheduler and
	// kwok (<name>.log). Stop deletes it.
	LogDir string

	stateDir  string
	plane     *envtest.ControlPlane
	processes []*process // started in order, stopped in reverse
	progress  io.Writer
	started   time.Time
}

// Start starts the plane on loopback, installs the CRDs, registers the
// node and applies the definitions, all with server-side apply, and writes
// the kubeconfig. It returns only when the node is Ready; on error nothing
// is left running. Call Stop when done.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	if err := checkKubeconfigIsOurs(opts.KubeconfigPath); err != nil {
		return nil, err
	}
	if err := checkBinaries(opts.BinDir); err != nil {
		return nil, err
	}
	stateDir, err := os.MkdirTemp("", "steward-dev-")
	if err != nil {
		return nil, fmt.Errorf("creating state dir: %w", err)
	}
	cp := &ControlPlane{
		KubeconfigPath: opts.KubeconfigPath,
		LogDir:         stateDir,
		stateDir:       stateDir,
		progress:       opts.Progress,
		started:        time.Now(),
	}
	if cp.progress == nil {
		cp.progress = io.Discard
	}
	if err := cp.start(ctx, opts); err != nil {
		return nil, errors.Join(err, cp.Stop())
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context, opts Options) error {
	keys, err := writeServiceAccountKeys(cp.stateDir)
	if err != nil {
		return err
	}
	if err := cp.startAPIServer(opts, keys); err != nil {
		return err
	}
	c, err := cp.writeAdminKubeconfig()
	if err != nil {
		return err
	}
	if err := cp.startComponents(opts, keys); err != nil {
		return err
	}

	crds, err := installCRDs(ctx, c, opts.CRDDir)
	if err != nil {
		return err
	}
	cp.step("%d CRDs installed from %s", crds, opts.CRDDir)

	for _, p := range cp.processes {
		waitCtx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
		err := p.waitHealthy(waitCtx)
		cancel()
		if err != nil {
			return err
		}
		cp.step("%s up", p.name)
	}

	if err := applyNode(ctx, c); err != nil {
		return err
	}
	if err := waitNodeSchedulable(ctx, c, opts.StartTimeout); err != nil {
		return err
	}
	cp.step("node %s Ready (simulated by kwok)", NodeName)

	cp.Definitions, err = ApplyDefinitions(ctx, c, opts.DefinitionsDir, opts.DefinitionNamespace)
	if err != nil {
		return err
	}
	cp.step("%d definitions installed in %s", cp.Definitions, opts.DefinitionNamespace)

	n, err := ApplyDefinitions(ctx, c, opts.KubeVelaToolsDir, DefaultDefinitionNamespace)
	if err != nil {
		return err
	}
	if n > 0 {
		cp.step("%d objects for KubeVela's CLI installed (query views, version marker)", n)
	}
	return nil
}

// startAPIServer starts etcd, then kube-apiserver verifying and signing
// ServiceAccount tokens with keys.
func (cp *ControlPlane) startAPIServer(opts Options, keys serviceAccountKeys) error {
	etcd := &envtest.Etcd{Path: filepath.Join(opts.BinDir, etcdBin), StartTimeout: opts.StartTimeout, StopTimeout: stopTimeout}
	api := &envtest.APIServer{Path: filepath.Join(opts.BinDir, kubeAPIServerBin), StartTimeout: opts.StartTimeout, StopTimeout: stopTimeout}
	if opts.AttachOutput {
		etcd.Out, etcd.Err = os.Stdout, os.Stderr
		api.Out, api.Err = os.Stdout, os.Stderr
	}
	api.Configure().
		Set("service-account-key-file", keys.publicPath).
		Set("service-account-signing-key-file", keys.privatePath)
	cp.plane = &envtest.ControlPlane{Etcd: etcd, APIServer: api}

	if err := etcd.Start(); err != nil {
		return fmt.Errorf("starting etcd from %s: %w", opts.BinDir, err)
	}
	cp.step("etcd up at %s", etcd.URL)
	api.EtcdURL = etcd.URL
	if err := api.Start(); err != nil {
		return fmt.Errorf("starting kube-apiserver from %s: %w", opts.BinDir, err)
	}
	cp.step("API server up at %s", api.SecureServing.URL("https", "/"))
	return nil
}

// writeAdminKubeconfig writes the admin kubeconfig for the user and returns
// a client with the same credentials.
func (cp *ControlPlane) writeAdminKubeconfig() (client.Client, error) {
	user, err := cp.plane.AddUser(envtest.User{Name: "steward-admin", Groups: []string{"system:masters"}}, &rest.Config{})
	if err != nil {
		return nil, fmt.Errorf("adding admin user: %w", err)
	}
	cp.Config = user.Config()
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return nil, fmt.Errorf("building kubeconfig: %w", err)
	}
	if err := writeKubeconfig(cp.KubeconfigPath, kubeconfig); err != nil {
		return nil, err
	}
	scheme, err := newScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cp.Config, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return c, nil
}

// startComponents starts kube-controller-manager, kube-scheduler and kwok,
// each with its own kubeconfig, on free loopback ports. It does not wait for
// them: Start installs the CRDs meanwhile.
func (cp *ControlPlane) startComponents(opts Options, keys serviceAccountKeys) error {
	caFile := filepath.Join(cp.stateDir, "ca.crt")
	if err := os.WriteFile(caFile, cp.plane.APIServer.SecureServing.CA, 0o600); err != nil {
		return fmt.Errorf("writing CA: %w", err)
	}
	kwokConfig := filepath.Join(cp.stateDir, "kwok.yaml")
	if err := os.WriteFile(kwokConfig, kwokStages, 0o600); err != nil {
		return fmt.Errorf("writing kwok config: %w", err)
	}
	kubeconfigs := map[string]string{}
	for name, user := range map[string]string{
		kubeControllerManagerBin: "system:kube-controller-manager",
		kubeSchedulerBin:         "system:kube-scheduler",
		kwokBin:                  "kwok",
	} {
		path, err := componentKubeconfig(cp.plane, cp.stateDir, name, user)
		if err != nil {
			return err
		}
		kubeconfigs[name] = path
	}
	var ports [3]int
	for i := range ports {
		port, err := freePort()
		if err != nil {
			return err
		}
		ports[i] = port
	}
	components := []component{
		controllerManager(cp.stateDir, kubeconfigs[kubeControllerManagerBin], caFile, keys, ports[0]),
		scheduler(cp.stateDir, kubeconfigs[kubeSchedulerBin], ports[1]),
		kwok(kubeconfigs[kwokBin], kwokConfig, ports[2]),
	}
	for _, comp := range components {
		p, err := startProcess(comp.name, filepath.Join(opts.BinDir, comp.name), comp.args,
			logPath(cp.stateDir, comp.name), comp.healthz, opts.AttachOutput)
		if err != nil {
			return err
		}
		cp.processes = append(cp.processes, p)
	}
	return nil
}

// step reports a completed step of the start with the time since it began.
func (cp *ControlPlane) step(format string, args ...any) {
	fmt.Fprintf(cp.progress, "  [%5.1fs] %s\n", time.Since(cp.started).Seconds(), fmt.Sprintf(format, args...))
}

// Stop terminates kwok, kube-scheduler, kube-controller-manager,
// kube-apiserver and etcd, deletes their data and logs, and removes the
// kubeconfig, which would point at a dead server. It is safe to call more
// than once.
func (cp *ControlPlane) Stop() error {
	if cp.stateDir == "" {
		return nil
	}
	var errs []error
	for i := len(cp.processes) - 1; i >= 0; i-- {
		errs = append(errs, cp.processes[i].stop(stopTimeout))
	}
	cp.processes = nil
	if cp.plane != nil {
		errs = append(errs, cp.plane.Stop())
		cp.plane = nil
	}
	if err := os.Remove(cp.KubeconfigPath); err != nil && !errors.Is(err, os.ErrNotExist) {
		errs = append(errs, fmt.Errorf("removing kubeconfig: %w", err))
	}
	if err := os.RemoveAll(cp.stateDir); err != nil {
		errs = append(errs, fmt.Errorf("removing state dir: %w", err))
	}
	cp.stateDir = ""
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("stopping control plane: %w", err)
	}
	return nil
}

func (o *Options) setDefaults() error {
	if o.BinDir == "" {
		o.BinDir = os.Getenv("KUBEBUILDER_ASSETS")
	}
	defaults := []struct {
		field *string
		value string
	}{
		{&o.BinDir, filepath.Join("bin", "k8s")},
		{&o.CRDDir, filepath.Join("config", "crd")},
		{&o.DefinitionsDir, filepath.Join("config", "definitions")},
		{&o.KubeVelaToolsDir, filepath.Join("config", "kubevela")},
		{&o.KubeconfigPath, filepath.Join(".local", "kubeconfig")},
	}
	for _, d := range defaults {
		if *d.field == "" {
			*d.field = d.value
		}
		abs, err := filepath.Abs(*d.field)
		if err != nil {
			return fmt.Errorf("resolving %s: %w", *d.field, err)
		}
		*d.field = abs
	}
	if o.DefinitionNamespace == "" {
		o.DefinitionNamespace = DefaultDefinitionNamespace
	}
	if o.StartTimeout == 0 {
		o.StartTimeout = time.Minute
	}
	return nil
}

// checkBinaries turns a bare "no such file" into what to do about it.
func checkBinaries(dir string) error {
	for _, name := range []string{etcdBin, kubeAPIServerBin, kubeControllerManagerBin, kubeSchedulerBin, kwokBin} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("%s not found in %s: run `make tools` (hack/install-tools.sh) to build it: %w", name, dir, err)
		}
	}
	return nil
}

func checkKubeconfigIsOurs(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading kubeconfig %s: %w", path, err)
	}
	if !bytes.HasPrefix(data, []byte(kubeconfigMarker)) {
		return fmt.Errorf("refusing to overwrite kubeconfig %s, which steward dev did not write: choose another path", path)
	}
	return nil
}

func writeKubeconfig(path string, kubeconfig []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating kubeconfig dir: %w", err)
	}
	data := append([]byte(kubeconfigMarker), kubeconfig...)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}
