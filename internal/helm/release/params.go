package release

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/steward-oam/steward/internal/helm/fetch"
)

// Params are vela/helm #Render's $params, as KubeVela's helmchart
// definition passes them.
type Params struct {
	Chart struct {
		Source  string `json:"source"`
		RepoURL string `json:"repoURL,omitempty"`
		Version string `json:"version,omitempty"`
		Auth    *struct {
			SecretRef *Ref `json:"secretRef,omitempty"`
		} `json:"auth,omitempty"`
	} `json:"chart"`
	Release *struct {
		Name      string `json:"name,omitempty"`
		Namespace string `json:"namespace,omitempty"`
	} `json:"release,omitempty"`
	Values     map[string]any `json:"values,omitempty"`
	ValuesFrom []ValuesFrom   `json:"valuesFrom,omitempty"`
	Context    *struct {
		AppName      string `json:"appName,omitempty"`
		AppNamespace string `json:"appNamespace,omitempty"`
		Name         string `json:"name,omitempty"`
		Namespace    string `json:"namespace,omitempty"`
	} `json:"context,omitempty"`
	Options *Options `json:"options,omitempty"`
}

// Ref names a Secret.
type Ref struct {
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
}

// MaxValuesFrom bounds a release's valuesFrom entries: each is a read of
// the cluster on every render and re-sync.
const MaxValuesFrom = 16

// ValuesFrom is one source of values.
type ValuesFrom struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Key       string `json:"key,omitempty"`
	Optional  bool   `json:"optional,omitempty"`
}

// Options are the definition's rendering options. Pointers are unset
// options, which take KubeVela's defaults.
type Options struct {
	IncludeCRDs     *bool  `json:"includeCRDs,omitempty"`
	SkipTests       *bool  `json:"skipTests,omitempty"`
	SkipHooks       *bool  `json:"skipHooks,omitempty"`
	CreateNamespace *bool  `json:"createNamespace,omitempty"`
	Timeout         string `json:"timeout,omitempty"`
	MaxHistory      *int   `json:"maxHistory,omitempty"`
	Atomic          *bool  `json:"atomic,omitempty"`
	Wait            *bool  `json:"wait,omitempty"`
	Force           *bool  `json:"force,omitempty"`
	RecreatePods    *bool  `json:"recreatePods,omitempty"`
	CleanupOnFail   *bool  `json:"cleanupOnFail,omitempty"`
	Cache           *struct {
		Key          string `json:"key,omitempty"`
		TTL          string `json:"ttl,omitempty"`
		ImmutableTTL string `json:"immutableTTL,omitempty"`
		MutableTTL   string `json:"mutableTTL,omitempty"`
	} `json:"cache,omitempty"`
	PostRender any `json:"postRender,omitempty"`
}

func flag(b *bool, def bool) bool {
	if b == nil {
		return def
	}
	return *b
}

// ParseParams reads an action's parameters.
func ParseParams(raw json.RawMessage) (*Params, error) {
	var p Params
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("the helm.#Render parameters do not parse: %w", err)
	}
	if p.Chart.Source == "" {
		return nil, fmt.Errorf("chart.source is empty")
	}
	if p.Options != nil && p.Options.PostRender != nil {
		return nil, fmt.Errorf("options.postRender is not supported")
	}
	return &p, nil
}

// Source is where the chart comes from.
func (p *Params) Source() fetch.Source {
	return fetch.Source{Chart: p.Chart.Source, RepoURL: p.Chart.RepoURL, Version: p.Chart.Version}
}

// ReleaseName is the release's name: release.name, else the component's.
func (p *Params) ReleaseName() string {
	if p.Release != nil && p.Release.Name != "" {
		return p.Release.Name
	}
	if p.Context != nil && p.Context.Name != "" {
		return p.Context.Name
	}
	return "release"
}

// ReleaseNamespace is the release's namespace: release.namespace, else
// the Application's (appNamespace).
func (p *Params) ReleaseNamespace(appNamespace string) string {
	if p.Release != nil && p.Release.Namespace != "" {
		return p.Release.Namespace
	}
	return appNamespace
}

func (p *Params) opts() Options {
	if p.Options == nil {
		return Options{}
	}
	return *p.Options
}

// IncludeCRDs, SkipTests, SkipHooks and CreateNamespace are the options
// with KubeVela's defaults (true, true, false, true).
func (p *Params) IncludeCRDs() bool     { return flag(p.opts().IncludeCRDs, true) }
func (p *Params) SkipTests() bool       { return flag(p.opts().SkipTests, true) }
func (p *Params) SkipHooks() bool       { return flag(p.opts().SkipHooks, false) }
func (p *Params) CreateNamespace() bool { return flag(p.opts().CreateNamespace, true) }

// MaxHistory is how many release records are kept (default 10).
func (p *Params) MaxHistory() int {
	if m := p.opts().MaxHistory; m != nil && *m > 0 {
		return *m
	}
	return 10
}

// Timeout is options.timeout (default 5m), which bounds the fetch.
func (p *Params) Timeout() (time.Duration, error) {
	t := p.opts().Timeout
	if t == "" {
		return 5 * time.Minute, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("options.timeout %q: %w", t, err)
	}
	return d, nil
}

// TTL is the cache lifetime options.cache asks for.
func (p *Params) TTL() (fetch.TTL, error) {
	c := p.opts().Cache
	if c == nil {
		return fetch.ParseTTL("", "", "")
	}
	return fetch.ParseTTL(c.TTL, c.ImmutableTTL, c.MutableTTL)
}

// OutputPrefix begins the name of every output of the helmchart
// definition (config/definitions/helmchart.yaml) that holds an object of
// the chart's manifest: "helm-resource-0", "helm-resource-1", …. The
// release's manifest is made of those outputs, and nothing else the
// component renders (TestOutputPrefix_IsTheDefinitions holds the two
// together).
const OutputPrefix = "helm-resource-"

// IsOutput reports whether an output of a helmchart component, by name,
// is an object of the chart's manifest.
func IsOutput(name string) bool { return strings.HasPrefix(name, OutputPrefix) }
