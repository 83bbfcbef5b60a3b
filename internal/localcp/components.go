/*
Copyright 2026 The Steward Authors.

Licensed under the Apache License, Version 2.0.
*/

package localcp

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	_ "embed"
	"encoding/pem"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// kwokStages is kwok's configuration: the default stages that make its
// node Ready and its Pods Running. The kwok binary runs no stage it is not
// given.
//
//go:embed kwok-stages.yaml
var kwokStages []byte

// Names of the component binaries in BinDir.
const (
	kubeAPIServerBin         = "kube-apiserver"
	etcdBin                  = "etcd"
	kubeControllerManagerBin = "kube-controller-manager"
	kubeSchedulerBin         = "kube-scheduler"
	kwokBin                  = "kwok"
)

// NodeName is the simulated node every Pod of the plane runs on.
const NodeName = "kwok-node"

// kwokNodeAnnotation marks the nodes kwok manages; kwok leaves others alone.
const kwokNodeAnnotation = "kwok.x-k8s.io/node"

// alwaysAllowPaths lets the plane (and a curious user) read the health and
// metrics of kube-controller-manager and kube-scheduler without credentials.
const alwaysAllowPaths = "--authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics"

// serviceAccountKeys is the key pair that signs ServiceAccount tokens: the
// API server signs and verifies with it, kube-controller-manager's token
// controller signs with the private half. A new pair is made per start.
type serviceAccountKeys struct {
	privatePath, publicPath string
}

func writeServiceAccountKeys(dir string) (serviceAccountKeys, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return serviceAccountKeys{}, fmt.Errorf("generating service account key: %w", err)
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return serviceAccountKeys{}, fmt.Errorf("encoding service account public key: %w", err)
	}
	keys := serviceAccountKeys{privatePath: filepath.Join(dir, "sa.key"), publicPath: filepath.Join(dir, "sa.pub")}
	if err := writePEM(keys.privatePath, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(key)); err != nil {
		return serviceAccountKeys{}, err
	}
	if err := writePEM(keys.publicPath, "PUBLIC KEY", pub); err != nil {
		return serviceAccountKeys{}, err
	}
	return keys, nil
}

func writePEM(path, blockType string, der []byte) error {
	data := pem.EncodeToMemory(&pem.Block{Type: blockType, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// componentKubeconfig writes <name>.kubeconfig for the component name,
// authenticating as user, a member of system:masters: the plane is a
// single-user sandbox, so its components get no narrower roles than the
// admin.
func componentKubeconfig(plane *envtest.ControlPlane, stateDir, name, user string) (string, error) {
	u, err := plane.AddUser(envtest.User{Name: user, Groups: []string{"system:masters"}}, &rest.Config{})
	if err != nil {
		return "", fmt.Errorf("adding user %s: %w", user, err)
	}
	data, err := u.KubeConfig()
	if err != nil {
		return "", fmt.Errorf("building kubeconfig of %s: %w", user, err)
	}
	path := filepath.Join(stateDir, name+".kubeconfig")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return "", fmt.Errorf("writing kubeconfig of %s: %w", user, err)
	}
	return path, nil
}

// component is how to run one of the processes the plane adds to envtest.
type component struct {
	name    string
	args    []string
	healthz string
}

// controllerManager runs every default controller (Deployments get
// ReplicaSets and Pods, namespaces are deleted, garbage is collected)
// without leader election, serving its health on a loopback port.
func controllerManager(stateDir, kubeconfig, caFile string, keys serviceAccountKeys, port int) component {
	return component{
		name: kubeControllerManagerBin,
		args: []string{
			"--kubeconfig=" + kubeconfig,
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + filepath.Join(stateDir, kubeControllerManagerBin),
			alwaysAllowPaths,
			"--service-account-private-key-file=" + keys.privatePath,
			"--root-ca-file=" + caFile,
		},
		healthz: fmt.Sprintf("https://127.0.0.1:%d/healthz", port),
	}
}

// scheduler binds Pods to the kwok node.
func scheduler(stateDir, kubeconfig string, port int) component {
	return component{
		name: kubeSchedulerBin,
		args: []string{
			"--kubeconfig=" + kubeconfig,
			"--leader-elect=false",
			"--bind-address=127.0.0.1",
			"--secure-port=" + strconv.Itoa(port),
			"--cert-dir=" + filepath.Join(stateDir, kubeSchedulerBin),
			alwaysAllowPaths,
		},
		healthz: fmt.Sprintf("https://127.0.0.1:%d/healthz", port),
	}
}

// kwok plays the kubelet of the nodes annotated kwokNodeAnnotation=fake:
// it keeps them Ready and moves their Pods through the stages of
// kwok-stages.yaml, giving each an IP from cidr.
func kwok(kubeconfig, configFile string, port int) component {
	return component{
		name: kwokBin,
		args: []string{
			"--kubeconfig=" + kubeconfig,
			"--config=" + configFile,
			"--manage-all-nodes=false",
			"--manage-nodes-with-annotation-selector=" + kwokNodeAnnotation + "=fake",
			"--node-ip=10.244.0.1",
			"--cidr=10.244.1.0/24",
			"--node-lease-duration-seconds=40",
			"--server-address=127.0.0.1:" + strconv.Itoa(port),
		},
		healthz: fmt.Sprintf("http://127.0.0.1:%d/healthz", port),
	}
}
