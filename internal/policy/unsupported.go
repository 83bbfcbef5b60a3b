package policy

import (
	"encoding/json"
	"fmt"

	"github.com/steward-oam/steward/api/v1beta1"
)

// TypeReplication is KubeVela's replication policy: a deploy step renders
// each selected component once per key, with context.replicaKey set.
// Steward does not carry it out.
const TypeReplication = "replication"

// UnsupportedError is a policy an Application uses that Steward does not
// carry out. Rendering without it would deliver something else than the
// policy asks (one copy instead of one per key, an Application not
// transformed), so the whole version is refused.
type UnsupportedError struct {
	Name, Type string
	// Why says what the policy does that Steward does not.
	Why string
}

func (e *UnsupportedError) Error() string {
	return fmt.Sprintf("policy %q (%s): %s, which Steward does not carry out; nothing of this version is applied. Remove the policy, or see docs/policies.md", e.Name, e.Type, e.Why)
}

// Unsupported returns an *UnsupportedError for the first policy of app
// Steward does not carry out: a replication policy a deploy step names
// (as in KubeVela, one no deploy step names does nothing), or one whose
// PolicyDefinition (in defs, by type) is Application-scoped. Other types
// without a native meaning are left alone here.
func Unsupported(app *v1beta1.Application, defs map[string]*v1beta1.PolicyDefinition) error {
	named := deployPolicies(app)
	for _, p := range app.Spec.Policies {
		if p.Type == TypeReplication && named[p.Name] {
			return &UnsupportedError{Name: p.Name, Type: p.Type, Why: "it renders the selected components once per key with context.replicaKey"}
		}
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

// deployPolicies returns the names of the policies the deploy steps of
// app's workflow (sub-steps included) list in properties.policies.
func deployPolicies(app *v1beta1.Application) map[string]bool {
	named := map[string]bool{}
	if app.Spec.Workflow == nil {
		return named
	}
	add := func(s v1beta1.WorkflowStepBase) {
		if s.Type != v1beta1.WorkflowStepTypeDeploy || s.Properties == nil {
			return
		}
		var props struct {
			Policies []string `json:"policies"`
		}
		if json.Unmarshal(s.Properties.Raw, &props) == nil {
			for _, n := range props.Policies {
				named[n] = true
			}
		}
	}
	for _, s := range app.Spec.Workflow.Steps {
		add(s.WorkflowStepBase)
		for _, sub := range s.SubSteps {
			add(sub)
		}
	}
	return named
}
