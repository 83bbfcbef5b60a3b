package application

import (
	"strings"
	"testing"
	"time"
)

// A new Application's bookkeeping, beside the one apply of each object it
// renders, is seven requests: its finalizer, the read that guards against
// an Application deleted as the finalizer lands, its version's tracker
// (created with the revision's label and the components' revisions),
// its ApplicationRevision (created without a list), the tracker's
// dispatch mark, the revision's status and the Application's status.
// The code before listed the revisions and wrote a component-revision
// tracker too: nine.
func TestNewApplication_BookkeepingRequests(t *testing.T) {
	ns, log := deliverLogged(t)
	waitReady(t, ns, "web")
	time.Sleep(time.Second) // a pass still running writes nothing more
	var got []string
	for _, r := range log.all() {
		path, query, _ := strings.Cut(r, "?")
		if strings.Contains(query, "watch=true") || strings.Contains(query, "resourceVersion=") {
			continue // the caches' watches and lists
		}
		if strings.Contains(path, "/namespaces/"+ns+"/applications/web") || strings.Contains(path, "/resourcetrackers") || strings.Contains(path, "/applicationrevisions") {
			got = append(got, path)
		}
	}
	want := []string{
		"PATCH /apis/core.oam.dev/v1beta1/namespaces/" + ns + "/applications/web",
		"GET /apis/core.oam.dev/v1beta1/namespaces/" + ns + "/applications/web",
		"POST /apis/core.oam.dev/v1beta1/resourcetrackers",
		"POST /apis/core.oam.dev/v1beta1/namespaces/" + ns + "/applicationrevisions",
		"PATCH /apis/core.oam.dev/v1beta1/resourcetrackers/web." + ns + ".v1",
		"PUT /apis/core.oam.dev/v1beta1/namespaces/" + ns + "/applicationrevisions/web-v1/status",
		"PATCH /apis/core.oam.dev/v1beta1/namespaces/" + ns + "/applications/web/status",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("a new Application's bookkeeping requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// deliverLogged delivers a new Application web (v1Spec) to a manager
// whose requests are logged, until its first revision records a
// succeeded workflow.
func deliverLogged(t *testing.T) (string, *requestLog) {
	t.Helper()
	ns := newNamespace(t)
	log := &requestLog{}
	startManager(t, log.wrap(testCfg), testOptions())
	createApp(t, ns, "metadata: {name: web}\nspec:"+indent(v1Spec))
	waitRevisions(t, ns, "web", "web-v1")
	waitSucceeded(t, ns, "web-v1")
	return ns, log
}
