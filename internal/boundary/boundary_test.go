package boundary

import (
	"strings"
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
)

func TestBoundary(t *testing.T) {
	open := Boundary{Namespace: "team-a"}
	confined := Boundary{Namespace: "team-a", Confined: true}
	asSA := Boundary{Namespace: "team-a", Confined: true, Impersonating: true}
	for _, tc := range []struct {
		name       string
		b          Boundary
		namespaced bool
		ns         string
		reason     string
	}{
		{"not confined: another namespace", open, true, "team-b", ""},
		{"not confined: cluster scope", open, false, "", ""},
		{"own namespace", confined, true, "team-a", ""},
		{"no namespace is the Application's", confined, true, "", ""},
		{"another namespace", confined, true, "team-b", v1beta1.ReasonCrossNamespaceObject},
		{"another namespace as a ServiceAccount", asSA, true, "vela-system", v1beta1.ReasonCrossNamespaceObject},
		{"cluster scope as Steward", confined, false, "", v1beta1.ReasonClusterScopedObject},
		{"cluster scope as a ServiceAccount: its RBAC decides", asSA, false, "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.b.CheckObject("ConfigMap x", tc.namespaced, tc.ns)
			switch {
			case tc.reason == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.reason != "" && err == nil:
				t.Fatal("allowed")
			case tc.reason != "":
				be := As(err)
				if be == nil || be.Reason != tc.reason {
					t.Fatalf("error %v: want reason %s", err, tc.reason)
				}
				if !strings.Contains(err.Error(), "--no-cross-namespace-objects") || !strings.Contains(err.Error(), "ConfigMap x") {
					t.Errorf("message %q names neither the object nor the flag", err)
				}
			}
		})
	}
}
