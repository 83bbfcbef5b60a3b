package application

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/yaml"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/application/decisionlog"
	"github.com/steward-oam/steward/internal/controller/application/facts"
	"github.com/steward-oam/steward/internal/controller/application/record"
	"github.com/steward-oam/steward/internal/cueeval"
	"github.com/steward-oam/steward/internal/helm/release"
	"github.com/steward-oam/steward/internal/render"
	"github.com/steward-oam/steward/internal/tracker"
)

// chartActions carries out vela/helm's #Render for a render: the chart is
// fetched (cached, in the background) and valuesFrom read as the
// Application, and the chart is rendered by the evaluator. Every release
// prepared is noted in s.Releases.
func (r *Reconciler) chartActions(ctx context.Context, s *facts.Pass) func(string, *v1beta1.Application, *render.ActionsError) ([]cueeval.ActionResult, error) {
	return func(clusterName string, app *v1beta1.Application, need *render.ActionsError) ([]cueeval.ActionResult, error) {
		named := func(err error) error {
			where := ""
			if clusterName != "" {
				where = fmt.Sprintf(" in cluster %q", clusterName)
			}
			return chartError(fmt.Sprintf("component %q%s", need.Component, where), err)
		}
		if r.Charts == nil {
			return nil, named(&release.Error{Reason: release.ReasonFetchFailed, Source: "?", Err: errors.New("this controller fetches no Helm charts")})
		}
		hub, err := s.Clients.GetClient(ctx, "")
		if err != nil {
			return nil, named(err)
		}
		var out []cueeval.ActionResult
		for _, a := range need.Actions {
			if a.Provider != "helm" || a.Do != "render" {
				return nil, named(fmt.Errorf("the %s.%s action at %s is not one a component may use", a.Provider, a.Do, a.Path))
			}
			// app is the Application itself, in its own namespace: the
			// boundary holds the release namespace, credentials and
			// values sources before anything is read or fetched.
			p, err := r.Charts.Prepare(ctx, hub, facts.BoundaryOf(app, s.Identity, r.Options.NoCrossNamespaceObjects), a.Params, r.ClusterVersion.GitVersion)
			if err != nil {
				return nil, named(r.endsWorkflow(s, err))
			}
			if p.CreateNamespace && p.Namespace != app.Namespace {
				if err := r.ensureNamespace(ctx, s, clusterName, p.Namespace); err != nil {
					return nil, named(err)
				}
			}
			s.Releases = append(s.Releases, &facts.HelmRelease{Cluster: clusterName, Component: need.Component, Name: p.Release, Namespace: p.Namespace,
				Fingerprint: p.Fingerprint, Params: a.Params, AppNamespace: app.Namespace, Prepared: p})
			out = append(out, cueeval.ActionResult{Path: a.Path, Chart: p.Action})
		}
		return out, nil
	}
}

// chartRendered notes what a component's chart rendered to: its objects
// become the release record's manifest; hooks, which Steward does not
// run, are reported once; the chart's CRDs are created when missing.
func (r *Reconciler) chartRendered(ctx context.Context, s *facts.Pass) func(string, *render.Component) error {
	return func(clusterName string, c *render.Component) error {
		for _, ch := range c.Charts {
			if err := r.ensureCRDs(ctx, s, clusterName, c.Name, ch); err != nil {
				return err
			}
		}
		var manifest strings.Builder
		for _, a := range c.Auxiliaries {
			if a.Trait != "" || !release.IsOutput(a.Name) {
				continue
			}
			b, err := yaml.Marshal(a.Object.Object)
			if err != nil {
				continue
			}
			fmt.Fprintf(&manifest, "---\n# Source: %s\n%s", a.Name, b)
		}
		for _, rel := range s.Releases {
			if rel.Cluster == clusterName && rel.Component == c.Name && rel.Manifest == "" {
				rel.Manifest = manifest.String()
			}
		}
		var hooks []string
		for _, ch := range c.Charts {
			hooks = append(hooks, ch.Hooks...)
		}
		if len(hooks) == 0 {
			return nil
		}
		msg := fmt.Sprintf("component %q: chart hooks are not run by Steward: %s", c.Name, strings.Join(hooks, ", "))
		key := s.App.Namespace + "/" + s.App.Name + "#hooks/" + c.Name
		if r.Warned.FirstTime(key, msg) {
			ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Skipped Helm hooks: Steward delivers a chart's objects, not its hooks", "component", c.Name, "hooks", hooks)
			r.Recorder.Eventf(s.App, nil, corev1.EventTypeWarning, v1beta1.EventHelmHooksNotRun, "Render", "%s", msg)
		}
		return nil
	}
}

// ensureCRDs creates the CustomResourceDefinitions of a chart's crds/
// that the cluster does not have, as the Application's ServiceAccount,
// before the chart's objects are placed (their kinds must be served).
// As Helm does, they are never upgraded nor deleted: a CRD's deletion
// deletes every object of its kind in the cluster, whoever made them.
func (r *Reconciler) ensureCRDs(ctx context.Context, s *facts.Pass, clusterName, component string, ch cueeval.ChartInfo) error {
	if len(ch.CRDs) == 0 {
		return nil
	}
	chartName, named := ch.Chart+"-"+ch.Version, "component "+strconv.Quote(component)
	if r.Options.NoCrossNamespaceObjects && s.Identity.IsZero() {
		return chartError(named, &release.Error{Reason: v1beta1.ReasonClusterScopedObject, Source: chartName, Err: errors.New("its crds/ are cluster-scoped, which an Application acting as Steward itself may not create (--no-cross-namespace-objects); set options.includeCRDs: false, or give the Application a ServiceAccount")})
	}
	c, err := s.Clients.GetClient(ctx, clusterName)
	if err != nil {
		return err
	}
	created, err := release.EnsureCRDs(ctx, c, chartName, ch.CRDs)
	for _, name := range created {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Created a chart's CustomResourceDefinition (crds/); it is never upgraded nor deleted", "crd", name, "cluster", clusterName, "component", component)
	}
	return chartError(named, err)
}

// chartError names what err happened to, with the condition reason of
// a *release.Error in it.
func chartError(what string, err error) error {
	if err == nil {
		return nil
	}
	err = fmt.Errorf("%s: %w", what, err)
	if he := (*release.Error)(nil); errors.As(err, &he) {
		return &facts.ReasonError{Reason: he.Reason, Err: err}
	}
	return err
}

// ensureNamespace creates a release's namespace when it is missing, as
// Helm's --create-namespace does, also when it was deleted by hand; like
// Helm, Steward never deletes it.
func (r *Reconciler) ensureNamespace(ctx context.Context, s *facts.Pass, clusterName, name string) error {
	c, err := s.Clients.GetClient(ctx, clusterName)
	if err != nil {
		return err
	}
	created, err := release.EnsureNamespace(ctx, c, name)
	if created {
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Created the release's namespace (createNamespace); it is never deleted", "namespace", name, "cluster", clusterName)
	}
	return err
}

// recordReleases writes a Helm release record for each release the
// version about to be recorded delivers (a new revision, pending, only
// when its chart or values changed) and returns what the version's
// tracker notes of them (tracker.AnnotationHelmReleases). A record that cannot be
// written (the ServiceAccount may not write Secrets there) is logged and
// never holds the delivery back: the release is then delivered without
// one.
func (r *Reconciler) recordReleases(ctx context.Context, s *facts.Pass) string {
	if len(s.Releases) == 0 {
		return ""
	}
	for _, rel := range s.Releases {
		err := r.recordRelease(ctx, s, rel)
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Writing the Helm release record failed; the release is delivered without it", "release", rel.Name, "namespace", rel.Namespace)
			continue
		}
		ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Recorded a Helm release revision", "release", rel.Name, "namespace", rel.Namespace, "revision", rel.Revision, "chart", rel.Prepared.Source)
	}
	b, err := json.Marshal(s.Releases)
	if err != nil {
		return ""
	}
	return string(b)
}

func (r *Reconciler) recordRelease(ctx context.Context, s *facts.Pass, rel *facts.HelmRelease) error {
	c, err := s.Clients.GetClient(ctx, rel.Cluster)
	if err != nil {
		return err
	}
	// A release `helm install` made is taken over inside the boundary
	// the placement rendered in, as the Application's identity (c).
	b := r.boundary(s)
	b.Namespace = rel.AppNamespace
	in, err := rel.Prepared.Input(rel.Manifest, map[string]string{v1beta1.LabelAppName: s.App.Name, v1beta1.LabelAppNamespace: s.App.Namespace, v1beta1.LabelAppComponent: rel.Component}, b)
	if err == nil {
		rel.Revision, err = release.Record(ctx, c, in)
	}
	return err
}

// releaseOwner are the labels that make a release record this
// Application's (helmchart's owns): Record writes them, Deployed and
// Uninstall touch only records that carry them.
func releaseOwner(s *facts.Pass) map[string]string {
	return map[string]string{v1beta1.LabelAppName: s.App.Name, v1beta1.LabelAppNamespace: s.App.Namespace}
}

// releasesDeployed marks the current version's release revisions
// deployed once the version is applied in full.
func (r *Reconciler) releasesDeployed(ctx context.Context, s *facts.Pass) {
	for _, rel := range record.ReleasesOf(s.Current) {
		if rel.Revision == 0 {
			continue
		}
		c, err := s.Clients.GetClient(ctx, rel.Cluster)
		if err == nil {
			err = release.Deployed(ctx, c, rel.Name, rel.Namespace, rel.Revision, releaseOwner(s))
		}
		if err != nil {
			ctrl.LoggerFrom(ctx).Error(err, "Marking the Helm release deployed failed", "release", rel.Name, "namespace", rel.Namespace)
			s.SetRetry(err)
		}
	}
}

// uninstallReleases deletes the release records of every release the
// trackers note, once the Application's objects are deleted.
func (r *Reconciler) uninstallReleases(ctx context.Context, s *facts.Pass, trackers []v1beta1.ResourceTracker) error {
	seen := map[tracker.Key]bool{}
	for i := range trackers {
		for _, rel := range record.ReleasesOf(&trackers[i]) {
			k := tracker.Key{Cluster: rel.Cluster, Namespace: rel.Namespace, Name: rel.Name}
			if seen[k] {
				continue
			}
			seen[k] = true
			c, err := s.Clients.GetClient(ctx, rel.Cluster)
			if err == nil {
				err = release.Uninstall(ctx, c, rel.Name, rel.Namespace, releaseOwner(s))
			}
			if err != nil {
				return fmt.Errorf("deleting the records of Helm release %s/%s: %w", rel.Namespace, rel.Name, err)
			}
			ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Deleted the Helm release's records", "release", rel.Name, "namespace", rel.Namespace, "cluster", rel.Cluster)
		}
	}
	return nil
}

// chartInputsMoved reports whether a chart the current version delivers,
// or its values, changed since it was rendered: a mutable version (a
// range, latest) now resolves to another chart, or a valuesFrom source
// was edited; or whether its release record was deleted or corrupted by
// hand. The version is then rendered again (a Helm upgrade, or the
// record written again). A release namespace deleted by hand
// (createNamespace) is created again first. A publishVersion pins the
// version, and nothing is looked at.
func (r *Reconciler) chartInputsMoved(ctx context.Context, s *facts.Pass) bool {
	rels := record.ReleasesOf(s.Current)
	if len(rels) == 0 || r.Charts == nil || s.Clients == nil {
		return false
	}
	hub, err := s.Clients.GetClient(ctx, "")
	if err != nil {
		return false
	}
	for _, rel := range rels {
		// A release namespace deleted by hand is made again, a record
		// deleted or corrupted by hand written again by rendering again.
		if c, err := s.Clients.GetClient(ctx, rel.Cluster); err == nil {
			state, err := release.Repair(ctx, c, release.Kept{Name: rel.Name, Namespace: rel.Namespace, AppNamespace: rel.AppNamespace, Params: rel.Params, Revision: rel.Revision}, releaseOwner(s))
			if err != nil {
				ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Cannot repair the Helm release now; looked at again on the next pass", "release", rel.Name, "namespace", rel.Namespace, "error", err.Error())
			} else if state.NeedsRecord() {
				ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Rendering the version again: its Helm release record is "+state.String(), "release", rel.Name, "namespace", rel.Namespace, "revision", rel.Revision)
				return true
			}
		}
		b := r.boundary(s)
		b.Namespace = rel.AppNamespace
		p, err := r.Charts.Peek(ctx, hub, b, rel.Params, r.ClusterVersion.GitVersion)
		if err != nil {
			// Kept as delivered; a render, when the spec changes, reports
			// it. A chart being fetched is looked at on the next pass.
			ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Kept the Helm release as delivered: its inputs cannot be read now", "release", rel.Name, "error", err.Error())
			continue
		}
		if p.Fingerprint != rel.Fingerprint {
			ctrl.LoggerFrom(ctx).V(decisionlog.Decision).Info("Rendering the version again: the chart or its values changed", "release", rel.Name, "component", rel.Component)
			return true
		}
	}
	return false
}

// endsWorkflow counts a failure no retry helps (release.Permanent) of
// the Application's generation. It is tried again on the unhealthy
// back-off, not the work queue's; from the release.MaxRetries-th on, the
// workflow ends (workflowFailed, reason WorkflowFailed), as KubeVela's
// does, and only a change or a re-sync renders it again.
func (r *Reconciler) endsWorkflow(s *facts.Pass, err error) error {
	n, ended := r.Charts.Failures.Ended(string(s.App.UID)+"/"+strconv.FormatInt(s.App.Generation, 10), err)
	if he := (*release.Error)(nil); n > 0 && errors.As(err, &he) {
		if ended {
			return &facts.ReasonError{Reason: v1beta1.ReasonWorkflowFailed, Err: fmt.Errorf("%s (failed %d times, the workflow ends: fix it, then change the Application or wait for its re-sync)", err, n)}
		}
		return &facts.ReasonError{Reason: he.Reason, Err: fmt.Errorf("%s (failed %d times; the workflow ends after %d)", err, n, release.MaxRetries)}
	}
	return err
}
