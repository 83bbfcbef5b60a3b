package application

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/controller/controllertest"
	"github.com/steward-oam/steward/internal/tracker"
	"github.com/steward-oam/steward/internal/watch"
)

// statusTrait is a PostDispatch trait reading the dispatched workload's
// live status, as KubeVela's own tests write them.
const statusTrait = `
apiVersion: core.oam.dev/v1beta1
kind: TraitDefinition
metadata: {name: status-copy}
spec:
  stage: PostDispatch
  schematic:
    cue:
      template: |
        outputs: statusConfigMap: {
          apiVersion: "v1"
          kind:       "ConfigMap"
          metadata: name: context.name + "-status"
          data: {
            replicas:      "\(context.output.status.replicas)"
            readyReplicas: "\(context.output.status.readyReplicas)"
            available:     "\(context.output.status.availableReplicas)"
          }
        }
`

// A PostDispatch trait renders once its component's workload is
// dispatched and healthy, with the live workload as context.output; until
// then it is pending and nothing else of the Application is held. What it
// renders is recorded in the version's tracker before it is applied,
// follows the live status, and survives a new version of the Application.
func TestPostDispatch_TraitsReadTheLiveWorkload(t *testing.T) {
	for _, mode := range []string{watch.ModeTimer, watch.ModeWatch} {
		t.Run(mode, func(t *testing.T) {
			ns := newNamespace(t)
			ctx := context.Background()
			opts := testOptions()
			opts.DriftDetection = mode
			startManager(t, testCfg, opts)
			createFromYAML(t, ns, statusTrait, &v1beta1.TraitDefinition{})
			createApp(t, ns, `
metadata: {name: web}
spec:
  components:
    - name: db
      type: test-healthy
      properties: {image: postgres}
      traits:
        - {type: status-copy}
    - {name: cfg, type: test-config, properties: {name: cfg, data: {k: v}}}
`)
			eventually(t, 30*time.Second, "the trait pending while db is not healthy, the rest applied", func() error {
				app := getApp(t, ns, "web")
				if !configMapExists(t, ns, "cfg") {
					return fmt.Errorf("cfg not applied")
				}
				for _, svc := range app.Status.Services {
					for _, tr := range svc.Traits {
						if tr.Type == "status-copy" {
							if !tr.Pending || tr.Healthy || !strings.Contains(tr.Message, "Waiting for component to be healthy") {
								return fmt.Errorf("trait status %+v", tr)
							}
							return nil
						}
					}
				}
				return fmt.Errorf("no status for trait status-copy: %+v", app.Status.Services)
			})
			if configMapExists(t, ns, "db-status") {
				t.Fatal("the PostDispatch trait rendered before its workload was healthy")
			}

			setReady(t, ns, "db")
			waitReady(t, ns, "web")
			eventually(t, 30*time.Second, "the trait's ConfigMap from the live status", func() error {
				cm, err := getConfigMap(t, ns, "db-status")
				if err != nil {
					return err
				}
				if cm.Data["readyReplicas"] != "2" || cm.Data["available"] != "2" {
					return fmt.Errorf("data %v", cm.Data)
				}
				return nil
			})
			app := getApp(t, ns, "web")
			rt := &v1beta1.ResourceTracker{}
			if err := testClient.Get(ctx, client.ObjectKey{Name: tracker.Name("web", ns, tracker.Versioned(app.Generation))}, rt); err != nil {
				t.Fatal(err)
			}
			entries, _ := tracker.Entries(rt)
			recorded := false
			for _, e := range entries {
				recorded = recorded || (e.Kind == "ConfigMap" && e.Name == "db-status" && e.Trait == "status-copy" && e.Component == "db")
			}
			if !recorded {
				t.Fatalf("the trait's ConfigMap is not recorded in %s", rt.Name)
			}
			eventually(t, 30*time.Second, "the trait reported rendered and healthy", func() error {
				for _, svc := range getApp(t, ns, "web").Status.Services {
					for _, tr := range svc.Traits {
						if tr.Type == "status-copy" && (tr.Pending || !tr.Healthy) {
							return fmt.Errorf("trait status %+v once rendered", tr)
						}
					}
				}
				return nil
			})

			// The live status moves: the trait follows it.
			eventually(t, 20*time.Second, "status moved", func() error {
				dep, err := getDeployment(t, ns, "db")
				if err != nil {
					return err
				}
				dep.Status.AvailableReplicas = 1
				return testClient.Status().Update(ctx, dep)
			})
			eventually(t, 30*time.Second, "the trait's ConfigMap follows the live status", func() error {
				cm, err := getConfigMap(t, ns, "db-status")
				if err != nil {
					return err
				}
				if cm.Data["available"] != "1" {
					return fmt.Errorf("data %v", cm.Data)
				}
				return nil
			})

			// A new version keeps the trait's object until it renders
			// again: never deleted in between.
			before, err := getConfigMap(t, ns, "db-status")
			if err != nil {
				t.Fatal(err)
			}
			app = getApp(t, ns, "web")
			app.Spec.Components[1].Properties.Raw = []byte(`{"name":"cfg","data":{"k":"v2"}}`)
			if err := testClient.Update(ctx, app); err != nil {
				t.Fatal(err)
			}
			eventually(t, 30*time.Second, "the new version applied and kept", func() error {
				cm, err := getConfigMap(t, ns, "cfg")
				if err != nil || cm.Data["k"] != "v2" {
					return fmt.Errorf("cfg %v %v", cm, err)
				}
				if got := getApp(t, ns, "web"); got.Status.ObservedGeneration != got.Generation || got.Status.Phase != v1beta1.ApplicationRunning {
					return fmt.Errorf("phase %s", got.Status.Phase)
				}
				return nil
			})
			after, err := getConfigMap(t, ns, "db-status")
			if err != nil || after.UID != before.UID {
				t.Fatalf("the trait's ConfigMap was deleted or re-created by the new version: %v", err)
			}
		})
	}
}

// A garbage-collect rule that selects a PostDispatch trait (KubeVela's
// webservice + expose with {traitTypes: [expose], strategy: onAppDelete})
// keeps what the trait renders until the Application is deleted; the
// trait still renders once its workload is healthy, its objects are
// applied, and its status is not left waiting.
func TestPostDispatch_TraitSelectedByAGarbageCollectRuleRenders(t *testing.T) {
	for _, mode := range []string{watch.ModeTimer, watch.ModeWatch} {
		t.Run(mode, func(t *testing.T) {
			ns := newNamespace(t)
			opts := testOptions()
			opts.DriftDetection = mode
			startManager(t, testCfg, opts)
			controllertest.InstallBuiltinDefinitions(t, ns, "webservice", "expose")
			createApp(t, ns, `
metadata: {name: web}
spec:
  components:
    - name: web
      type: webservice
      properties: {image: nginx, ports: [{port: 80}]}
      traits:
        - {type: expose, properties: {port: [80]}}
  policies:
    - name: keep-service
      type: garbage-collect
      properties:
        rules:
          - selector: {traitTypes: [expose]}
            strategy: onAppDelete
`)
			eventually(t, 20*time.Second, "deployment web made ready", func() error {
				dep, err := getDeployment(t, ns, "web")
				if err != nil {
					return err
				}
				dep.Status.ObservedGeneration = dep.Generation
				dep.Status.Replicas, dep.Status.ReadyReplicas, dep.Status.UpdatedReplicas, dep.Status.AvailableReplicas = 1, 1, 1, 1
				return testClient.Status().Update(context.Background(), dep)
			})
			eventually(t, 30*time.Second, "the trait's Service applied and the trait reported rendered", func() error {
				svc := &corev1.Service{}
				if err := testClient.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: "web"}, svc); err != nil {
					return err
				}
				for _, s := range getApp(t, ns, "web").Status.Services {
					for _, tr := range s.Traits {
						if tr.Type == "expose" && (tr.Pending || !tr.Healthy) {
							return fmt.Errorf("trait status %+v", tr)
						}
					}
				}
				return nil
			})
			waitReady(t, ns, "web")
		})
	}
}
