package cli

import (
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
)

// Kube is how a command reaches its cluster: kubectl's own flags
// (--kubeconfig, --context, -n/--namespace, --server, --token, ...) through
// k8s.io/cli-runtime, so they mean what they mean for kubectl.
type Kube struct {
	Flags *genericclioptions.ConfigFlags
}

// NewKube returns kubectl's connection flags, not yet bound to a command;
// without withNamespace there is no -n (the controller serves all
// namespaces).
func NewKube(withNamespace bool) *Kube {
	f := genericclioptions.NewConfigFlags(true)
	if !withNamespace {
		f.Namespace = nil
	}
	return &Kube{Flags: f}
}

// AddFlags binds the connection flags to fs.
func (k *Kube) AddFlags(fs *pflag.FlagSet) { k.Flags.AddFlags(fs) }

// Config is the REST config the flags select: the kubeconfig (--kubeconfig,
// else $KUBECONFIG, else ~/.kube/config, else in-cluster) and context.
func (k *Kube) Config() (*rest.Config, error) {
	cfg, err := k.Flags.ToRESTConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig: %w", err)
	}
	return cfg, nil
}

// Namespace is the namespace the flags select: -n, else the context's, else
// "default". explicit is true when -n was given.
func (k *Kube) Namespace() (ns string, explicit bool, err error) {
	ns, explicit, err = k.Flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", false, fmt.Errorf("reading the namespace from kubeconfig: %w", err)
	}
	return ns, explicit, nil
}

// Client connects to the selected cluster with a client that knows
// client-go's kinds and OAM's and reads straight from the API server.
func (k *Kube) Client() (*rest.Config, client.Client, error) {
	cfg, err := k.Config()
	if err != nil {
		return nil, nil, err
	}
	c, err := NewClient(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, c, nil
}

// NewClient is a direct (uncached) client for cfg with client-go's and
// OAM's kinds.
func NewClient(cfg *rest.Config) (client.Client, error) {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(v1beta1.AddToScheme(s))
	c, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	return c, nil
}

// Target is what a command about Applications needs: the config, a
// client and the namespace the flags select (-n, else the context's).
func (k *Kube) Target() (*rest.Config, client.Client, string, error) {
	cfg, c, err := k.Client()
	if err != nil {
		return nil, nil, "", err
	}
	ns, _, err := k.Namespace()
	if err != nil {
		return nil, nil, "", err
	}
	return cfg, c, ns, nil
}

// User names the kubeconfig user of the selected context ("" when it
// cannot be told, in a Pod say).
func (k *Kube) User() string {
	raw, err := k.Flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return ""
	}
	name := raw.CurrentContext
	if k.Flags.Context != nil && *k.Flags.Context != "" {
		name = *k.Flags.Context
	}
	if c, ok := raw.Contexts[name]; ok {
		if k.Flags.AuthInfoName != nil && *k.Flags.AuthInfoName != "" {
			return *k.Flags.AuthInfoName
		}
		return c.AuthInfo
	}
	return ""
}
