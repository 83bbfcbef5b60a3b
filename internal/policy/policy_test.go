package policy

import (
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/steward-oam/steward/api/v1beta1"
)

func appWith(policies ...v1beta1.AppPolicy) *v1beta1.Application {
	return &v1beta1.Application{Spec: v1beta1.ApplicationSpec{Policies: policies}}
}

func pol(name, typ, props string) v1beta1.AppPolicy {
	return v1beta1.AppPolicy{Name: name, Type: typ, Properties: &runtime.RawExtension{Raw: []byte(props)}}
}

var (
	deploy  = Resource{Component: "web", ComponentType: "webservice", Kind: "Deployment", Name: "web"}
	service = Resource{Component: "web", ComponentType: "webservice", Trait: "expose", Kind: "Service", Name: "web"}
	config  = Resource{Component: "cfg", ComponentType: "k8s-objects", Kind: "ConfigMap", Name: "settings"}
)

func TestSelector_MatchesEveryGivenField(t *testing.T) {
	for _, tc := range []struct {
		sel  Selector
		r    Resource
		want bool
	}{
		{Selector{}, deploy, true},
		{Selector{ComponentNames: []string{"web"}}, deploy, true},
		{Selector{ComponentNames: []string{"web"}}, config, false},
		{Selector{ComponentTypes: []string{"k8s-objects"}}, config, true},
		{Selector{OAMTypes: []string{"TRAIT"}}, service, true},
		{Selector{OAMTypes: []string{"TRAIT"}}, deploy, false},
		{Selector{OAMTypes: []string{"COMPONENT"}}, deploy, true},
		{Selector{TraitTypes: []string{"expose"}}, service, true},
		{Selector{TraitTypes: []string{"expose"}}, deploy, false},
		{Selector{ResourceTypes: []string{"Service", "ConfigMap"}}, config, true},
		{Selector{ResourceTypes: []string{"Service"}, ResourceNames: []string{"other"}}, service, false},
	} {
		if got := tc.sel.Matches(tc.r); got != tc.want {
			t.Errorf("%+v matches %+v = %v, want %v", tc.sel, tc.r, got, tc.want)
		}
	}
}

func TestGCStrategy_FirstMatchingRuleWins(t *testing.T) {
	rules, err := Parse(appWith(pol("gc", TypeGarbageCollect, `{"keepLegacyResource": true, "rules": [
		{"selector": {"resourceTypes": ["ConfigMap"]}, "strategy": "never"},
		{"selector": {"componentNames": ["web", "cfg"]}, "strategy": "onAppDelete"},
		{"selector": {"traitTypes": ["expose"]}}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	if !rules.GC.KeepLegacyResource {
		t.Error("keepLegacyResource not read")
	}
	for r, want := range map[Resource]GCStrategy{config: Never, deploy: OnAppDelete, service: OnAppDelete, {Component: "x", Kind: "Job"}: OnAppUpdate} {
		if got := rules.GCStrategy(r); got != want {
			t.Errorf("%+v: %s, want %s", r, got, want)
		}
	}
}

func TestComponentTypes_NamesTheTypesGCAndReadOnlyRulesSelectBy(t *testing.T) {
	rules, err := Parse(appWith(
		pol("gc", TypeGarbageCollect, `{"rules": [
			{"selector": {"componentTypes": ["k8s-objects"]}, "strategy": "never"},
			{"selector": {"componentNames": ["web"]}, "strategy": "onAppDelete"},
			{"selector": {"componentTypes": ["webservice", "k8s-objects"]}}]}`),
		pol("ro", TypeReadOnly, `{"rules": [{"selector": {"componentTypes": ["raw"]}}]}`),
		pol("adopt", TypeTakeOver, `{"rules": [{"selector": {"componentTypes": ["task"]}}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := rules.ComponentTypes(), []string{"k8s-objects", "webservice", "raw"}; !slices.Equal(got, want) {
		t.Errorf("ComponentTypes() = %v, want %v (take-over decides nothing about deletion)", got, want)
	}
	if got := (&Rules{}).ComponentTypes(); got != nil {
		t.Errorf("no rules: %v", got)
	}
}

func TestParse_RejectsBadPropertiesNamingThePolicy(t *testing.T) {
	_, err := Parse(appWith(pol("my-gc", TypeGarbageCollect, `{"rules": [{"selector": {}, "strategy": "sometimes"}]}`)))
	if err == nil || !strings.Contains(err.Error(), `"my-gc"`) || !strings.Contains(err.Error(), "sometimes") {
		t.Errorf("error = %v", err)
	}
	_, err = Parse(appWith(pol("ro", TypeReadOnly, `{"rules": "all"}`)))
	if err == nil || !strings.Contains(err.Error(), `"ro"`) {
		t.Errorf("error = %v", err)
	}
}

func TestReadOnlyTakeOverShared(t *testing.T) {
	rules, err := Parse(appWith(
		pol("ro", TypeReadOnly, `{"rules": [{"selector": {"resourceTypes": ["ConfigMap"]}}]}`),
		pol("to", TypeTakeOver, `{"rules": [{"selector": {"componentNames": ["web"]}}]}`),
		pol("sh", TypeSharedResource, `{"rules": [{"selector": {"traitTypes": ["expose"]}}]}`),
		pol("topology", "topology", `{"clusters": ["local"]}`),
	))
	if err != nil {
		t.Fatal(err)
	}
	if !rules.ReadOnly(config) || rules.ReadOnly(deploy) {
		t.Error("read-only selection wrong")
	}
	if !rules.TakeOver(deploy) || !rules.TakeOver(service) || rules.TakeOver(config) {
		t.Error("take-over selection wrong")
	}
	if !rules.Shared(service) || rules.Shared(deploy) {
		t.Error("shared selection wrong")
	}
}

func TestApplyOncePaths(t *testing.T) {
	whole, _ := Parse(appWith(pol("ao", TypeApplyOnce, `{"enable": true}`)))
	if got := whole.ApplyOncePaths(deploy, false); !slices.Equal(got, []string{"*"}) {
		t.Errorf("enable without rules on StateKeep = %v, want [*]", got)
	}
	if got := whole.ApplyOncePaths(deploy, true); got != nil {
		t.Errorf("enable without rules on update = %v, want nil (a new version is applied)", got)
	}
	rules, _ := Parse(appWith(pol("ao", TypeApplyOnce, `{"enable": true, "rules": [
		{"selector": {"resourceTypes": ["Deployment"]}, "strategy": {"path": ["spec.replicas"]}},
		{"selector": {"resourceTypes": ["Service"]}, "strategy": {"affect": "onStateKeep", "path": ["*"]}}]}`)))
	if got := rules.ApplyOncePaths(deploy, false); !slices.Equal(got, []string{"spec.replicas"}) {
		t.Errorf("deployment on StateKeep = %v", got)
	}
	if got := rules.ApplyOncePaths(deploy, true); !slices.Equal(got, []string{"spec.replicas"}) {
		t.Errorf("deployment on update (no affect = both) = %v", got)
	}
	if got := rules.ApplyOncePaths(service, true); got != nil {
		t.Errorf("service on update with affect onStateKeep = %v, want nil", got)
	}
	if got := rules.ApplyOncePaths(config, false); got != nil {
		t.Errorf("unselected = %v", got)
	}
	off, _ := Parse(appWith(pol("ao", TypeApplyOnce, `{"enable": false, "rules": [{"strategy": {"path": ["*"]}}]}`)))
	if got := off.ApplyOncePaths(deploy, false); got != nil {
		t.Errorf("disabled = %v", got)
	}
}

func TestUnsupported_NamesThePolicy(t *testing.T) {
	app := &v1beta1.Application{}
	app.Spec.Policies = []v1beta1.AppPolicy{{Name: "gc", Type: TypeGarbageCollect}, {Name: "custom", Type: "my-policy"}}
	appScoped := &v1beta1.PolicyDefinition{}
	appScoped.Namespace, appScoped.Name, appScoped.Spec.Scope = "vela-system", "add-labels", v1beta1.PolicyScopeApplication
	defs := map[string]*v1beta1.PolicyDefinition{"my-policy": {}, "add-labels": appScoped}
	if err := Unsupported(app, defs); err != nil {
		t.Fatalf("supported policies refused: %v", err)
	}
	// Replication is carried out (internal/placement.Replicate), wherever
	// a deploy step names it.
	app.Spec.Policies = []v1beta1.AppPolicy{{Name: "p", Type: TypeReplication}}
	app.Spec.Workflow = &v1beta1.Workflow{Steps: []v1beta1.WorkflowStep{{WorkflowStepBase: v1beta1.WorkflowStepBase{Name: "g", Type: v1beta1.WorkflowStepTypeStepGroup},
		SubSteps: []v1beta1.WorkflowStepBase{{Name: "d", Type: v1beta1.WorkflowStepTypeDeploy, Properties: &runtime.RawExtension{Raw: []byte(`{"policies":["p"]}`)}}}}}}
	if err := Unsupported(app, defs); err != nil {
		t.Fatalf("a replication policy refused: %v", err)
	}
	app.Spec.Policies = []v1beta1.AppPolicy{{Name: "p", Type: "add-labels"}}
	if err := Unsupported(app, defs); err == nil || !strings.Contains(err.Error(), `policy "p" (add-labels)`) || !strings.Contains(err.Error(), "Application-scoped") {
		t.Errorf("add-labels: %v", err)
	}
	if UnsupportedDefinition(&v1beta1.PolicyDefinition{Spec: v1beta1.PolicyDefinitionSpec{Global: true}}) == "" || UnsupportedDefinition(appScoped) == "" || UnsupportedDefinition(&v1beta1.PolicyDefinition{}) != "" {
		t.Error("UnsupportedDefinition")
	}
}
