package fetch

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/Masterminds/semver/v3"
)

// Kind is how a chart source is fetched.
type Kind string

// The kinds of chart sources, as KubeVela detects them.
const (
	// KindRepo is a chart by name in a Helm repository (repoURL).
	KindRepo Kind = "repo"
	// KindOCI is an oci:// reference in an OCI registry.
	KindOCI Kind = "oci"
	// KindURL is the URL of a chart archive.
	KindURL Kind = "url"
)

// Source is where a chart comes from: KubeVela's chart parameters.
type Source struct {
	// Chart is a chart name (with RepoURL), an oci:// reference, or an
	// http(s) URL of a .tgz.
	Chart string
	// RepoURL is the Helm repository of a chart given by name.
	RepoURL string
	// Version is an exact version, a semver range, or "latest" (also
	// empty); ignored for a URL.
	Version string
}

// Kind says how s is fetched.
func (s Source) Kind() Kind {
	switch {
	case strings.HasPrefix(s.Chart, "oci://"):
		return KindOCI
	case strings.HasPrefix(s.Chart, "http://"), strings.HasPrefix(s.Chart, "https://"):
		return KindURL
	}
	return KindRepo
}

// String names the source for messages; it never holds credentials
// (a URL's user information is dropped).
func (s Source) String() string {
	v := ""
	if s.Version != "" && s.Kind() != KindURL {
		v = " " + s.Version
	}
	if s.Kind() == KindRepo {
		return fmt.Sprintf("%s%s from %s", s.Chart, v, redact(s.RepoURL))
	}
	return redact(s.Chart) + v
}

var userInfo = regexp.MustCompile(`://[^/@]*@`)

func redact(u string) string { return userInfo.ReplaceAllString(u, "://") }

// mutableTags are versions KubeVela treats as moving.
var mutableTags = map[string]bool{"": true, "latest": true, "dev": true, "develop": true, "main": true, "master": true,
	"edge": true, "canary": true, "nightly": true}

// Mutable reports whether a version may resolve to another chart later:
// latest, a range, or a moving tag such as main. An exact semantic version
// does not.
func Mutable(version string) bool {
	if mutableTags[strings.ToLower(version)] {
		return true
	}
	_, err := semver.StrictNewVersion(strings.TrimPrefix(version, "v"))
	return err != nil
}

// TTL is how long a resolved version is trusted (KubeVela's
// options.cache).
type TTL struct {
	// TTL, when set, is the lifetime of every version.
	TTL time.Duration
	// Immutable and Mutable are the lifetimes of exact versions and of
	// moving ones.
	Immutable, Mutable time.Duration
	// Disabled is ttl "0": nothing is cached.
	Disabled bool
}

// For is the lifetime of version's resolution; zero caches nothing.
func (t TTL) For(version string) time.Duration {
	switch {
	case t.Disabled:
		return 0
	case t.TTL > 0:
		return t.TTL
	case Mutable(version):
		return t.Mutable
	}
	return t.Immutable
}

// ParseTTL reads options.cache's ttl, immutableTTL and mutableTTL, with
// KubeVela's defaults (24h and 5m).
func ParseTTL(ttl, immutable, mutable string) (TTL, error) {
	out := TTL{Immutable: 24 * time.Hour, Mutable: 5 * time.Minute}
	if ttl == "0" {
		out.Disabled = true
		return out, nil
	}
	for _, f := range []struct {
		name, value string
		into        *time.Duration
	}{{"ttl", ttl, &out.TTL}, {"immutableTTL", immutable, &out.Immutable}, {"mutableTTL", mutable, &out.Mutable}} {
		if f.value == "" {
			continue
		}
		d, err := time.ParseDuration(f.value)
		if err != nil || d < 0 {
			return out, fmt.Errorf("options.cache.%s %q: want a duration such as 5m", f.name, f.value)
		}
		*f.into = d
	}
	return out, nil
}
