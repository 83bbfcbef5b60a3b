package policy

import (
	"fmt"

	"github.com/steward-oam/steward/api/v1beta1"
)

// TypeReplication is KubeVela's replication policy: a deploy step naming
// it renders each selected component once per key, with
// context.replicaKey set (internal/placement.Replicate).
const TypeReplication = "replication"

// UnsupportedError is a policy an Application uses that Steward does not
// carry out. Rendering without it would deliver something else than the
// policy asks (an Application not transformed), so the whole version is
// refused.
type UnsupportedError struct {
	Name, Type string
	// Why says what the policy does that Steward does not.
	Why string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("policy %q (%s): %s, which Steward does not carry out; nothing of this version is applied. Remove the policy, or see docs/policies.md", e.Name, e.Type, e.Why)
}

// Unsupported returns an *UnsupportedError for the first policy of app
// Steward does not carry out: one whose PolicyDefinition (in defs, by
// type) is Application-scoped. Other types without a native meaning
// render their template (render.RenderPolicies).
func Unsupported(app *v1beta1.Application, defs map[string]*v1beta1.PolicyDefinition) error {
	for _, p := range app.Spec.Policies {
		if d := defs[p.Type]; d != nil && d.Spec.Scope == v1beta1.PolicyScopeApplication {
			return &UnsupportedError{Name: p.Name, Type: p.Type, Why: fmt.Sprintf("its PolicyDefinition %s/%s is Application-scoped (spec.scope: Application): it transforms the Application before rendering", d.Namespace, d.Name)}
		}
	}
	return nil
}

// UnsupportedDefinition says why Steward does not carry out a
// PolicyDefinition, "" when it does (or may: a template it renders).
func UnsupportedDefinition(d *v1beta1.PolicyDefinition) string {
	switch {
	case d.Spec.Global:
		return "a global policy (spec.global: true): KubeVela applies it to every Application of its namespace (of every namespace when in the system namespace); Steward does not apply global policies, so no Application gets it"
	case d.Spec.Scope == v1beta1.PolicyScopeApplication:
		return "an Application-scoped policy (spec.scope: Application) transforms the Application before rendering; Steward does not carry it out, and refuses an Application that uses it (reason UnsupportedPolicy)"
	}
	return ""
}
