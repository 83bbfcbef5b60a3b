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
const kubeconfigMarker = "# Written by steward up for its local control plane; deleted when it stops.\n"

// Options say where the plane finds its binaries and what it installs.
// Relative paths are resolved against the working directory; `make run`
// runs from the repository root, where the defaults point.
type Options struct {
	// BinDir holds the kube-apiserver and etcd binaries. Defaults to
	// $KUBEBUILDER_ASSETS when set, else bin/k8s (built by `make tools`).
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
	// KubeconfigPath is where the admin kubeconfig is written. Defaults to
	// .local/kubeconfig.
	KubeconfigPath string
	// StartTimeout bounds the start of each of etcd and kube-apiserver.
	// Defaults to one minute: the apiserver is slow on a busy laptop.
	StartTimeout time.Duration
	// AttachOutput copies the etcd and kube-apiserver logs to stdout/stderr.
	AttachOutput bool
}

// ControlPlane is a running local control plane.
type ControlPlane struct {
	// Config talks to the apiserver as a member of system:masters.
	Config *rest.Config
	// KubeconfigPath is the absolute path of a kubeconfig with the same
	// credentials as Config, for kubectl.
	KubeconfigPath string
	// Definitions is the number of definition objects applied at start.
	Definitions int

	env *envtest.Environment
}

// Start starts etcd and kube-apiserver on loopback, installs the CRDs and
// definitions, and writes the kubeconfig. It returns only when the plane is
// ready; on error nothing is left running. Call Stop when done.
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

	env := &envtest.Environment{
		BinaryAssetsDirectory:    opts.BinDir,
		CRDDirectoryPaths:        []string{opts.CRDDir},
		ErrorIfCRDPathMissing:    true,
		ControlPlaneStartTimeout: opts.StartTimeout,
		AttachControlPlaneOutput: opts.AttachOutput,
	}
	// Pin the binaries so KUBEBUILDER_ASSETS cannot override an explicit BinDir.
	env.ControlPlane.GetAPIServer().Path = filepath.Join(opts.BinDir, "kube-apiserver")
	env.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(opts.BinDir, "etcd")}

	cp := &ControlPlane{KubeconfigPath: opts.KubeconfigPath, env: env}
	if err := cp.start(ctx, opts); err != nil {
		return nil, errors.Join(err, env.Stop())
	}
	return cp, nil
}

func (cp *ControlPlane) start(ctx context.Context, opts Options) error {
	if _, err := cp.env.Start(); err != nil {
		return fmt.Errorf("starting control plane from %s: %w", opts.BinDir, err)
	}
	user, err := cp.env.AddUser(envtest.User{Name: "steward-admin", Groups: []string{"system:masters"}}, &rest.Config{})
	if err != nil {
		return fmt.Errorf("adding admin user: %w", err)
	}
	cp.Config = user.Config()
	kubeconfig, err := user.KubeConfig()
	if err != nil {
		return fmt.Errorf("building kubeconfig: %w", err)
	}
	if err := writeKubeconfig(cp.KubeconfigPath, kubeconfig); err != nil {
		return err
	}

	c, err := client.New(cp.Config, client.Options{})
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	cp.Definitions, err = ApplyDefinitions(ctx, c, opts.DefinitionsDir, opts.DefinitionNamespace)
	return err
}

// Stop terminates kube-apiserver and etcd, deletes their data, and removes
// the kubeconfig, which would point at a dead server. It is safe to call more
// than once.
func (cp *ControlPlane) Stop() error {
	if cp.env == nil {
		return nil
	}
	err := cp.env.Stop()
	cp.env = nil
	if rmErr := os.Remove(cp.KubeconfigPath); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
		err = errors.Join(err, fmt.Errorf("removing kubeconfig: %w", rmErr))
	}
	if err != nil {
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

// checkBinaries turns envtest's bare "no such file" into what to do about it.
func checkBinaries(dir string) error {
	for _, name := range []string{"kube-apiserver", "etcd"} {
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
		return fmt.Errorf("refusing to overwrite kubeconfig %s, which steward up did not write: choose another path", path)
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
