package fetch_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/steward-oam/steward/internal/helm/chart/charttest"
	"github.com/steward-oam/steward/internal/helm/fetch"
)

// A chart or version that does not exist, refused credentials and a
// malformed source are permanent: trying again gets the same answer. An
// unreachable repository and a server error are transient. KubeVela's
// workflow ends on the first kind after its retries; Steward keeps
// retrying the second.
func TestFetch_PermanentAndTransientFailures(t *testing.T) {
	repo := charttest.NewRepo()
	defer repo.Close()
	repo.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	private := charttest.NewRepo()
	defer private.Close()
	private.Username, private.Password = "bob", "pw"
	private.Add(charttest.ConfigMapChart("demo", "1.0.0"))
	reg := charttest.NewRegistry()
	defer reg.Close()
	ref := reg.Push("charts", charttest.ConfigMapChart("podinfo", "6.7.0"))
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
	}))
	defer broken.Close()
	gone := charttest.NewRepo()
	goneURL := gone.URL()
	gone.Close()
	plain := &fetch.Auth{PlainHTTP: true}

	for name, tc := range map[string]struct {
		src       fetch.Source
		auth      *fetch.Auth
		permanent bool
	}{
		"a chart the repository does not have":   {src: fetch.Source{Chart: "nope", RepoURL: repo.URL()}, permanent: true},
		"a version the repository does not have": {src: fetch.Source{Chart: "demo", RepoURL: repo.URL(), Version: "9.9.9"}, permanent: true},
		"a range nothing matches":                {src: fetch.Source{Chart: "demo", RepoURL: repo.URL(), Version: "^3.0.0"}, permanent: true},
		"a URL that answers 404":                 {src: fetch.Source{Chart: repo.URL() + "/missing-1.0.0.tgz"}, permanent: true},
		"credentials refused":                    {src: fetch.Source{Chart: "demo", RepoURL: private.URL()}, permanent: true},
		"no repoURL":                             {src: fetch.Source{Chart: "demo"}, permanent: true},
		"an OCI tag that does not exist":         {src: fetch.Source{Chart: ref, Version: "9.9.9"}, auth: plain, permanent: true},
		"an OCI repository that does not exist":  {src: fetch.Source{Chart: "oci://" + reg.Host() + "/charts/nope", Version: "1.0.0"}, auth: plain, permanent: true},
		"an OCI range nothing matches":           {src: fetch.Source{Chart: ref, Version: "^9.0.0"}, auth: plain, permanent: true},
		"a tag inside the OCI reference":         {src: fetch.Source{Chart: ref + ":6.7.0"}, auth: plain, permanent: true},
		"an unreachable repository":              {src: fetch.Source{Chart: "demo", RepoURL: goneURL}},
		"an unreachable URL":                     {src: fetch.Source{Chart: goneURL + "/demo-1.0.0.tgz"}},
		"a repository answering 503":             {src: fetch.Source{Chart: "demo", RepoURL: broken.URL}},
	} {
		f := fetch.New(fetch.Options{})
		_, err := f.Fetch(context.Background(), tc.src, tc.auth, defaults(t))
		if err == nil {
			t.Errorf("%s: fetched", name)
			continue
		}
		if got := fetch.IsPermanent(err); got != tc.permanent {
			t.Errorf("%s: IsPermanent = %v, want %v (%v)", name, got, tc.permanent, err)
		}
		// The failure remembered for the back-off keeps its kind.
		_, again := f.Fetch(context.Background(), tc.src, tc.auth, defaults(t))
		if got := fetch.IsPermanent(again); got != tc.permanent {
			t.Errorf("%s, remembered: IsPermanent = %v, want %v (%v)", name, got, tc.permanent, again)
		}
	}
}
