package chaos

import "testing"

// TestModel_Settle pins the expected states the model derives from the
// documented semantics, so that a change to the model is deliberate.
func TestModel_Settle(t *testing.T) {
	w := newWorld()
	a := w.Apps["alpha"]
	a.Exists = true
	cm := component{Name: "alpha-cm-1", Value: "v1"}
	web := component{Name: "alpha-web-2", Web: true, Value: "nginx:1"}
	a.Spec.Components[cm.Name] = cm
	a.Spec.Components[web.Name] = web
	w.settle(a, false)
	o := w.Objects[objKey("ConfigMap", cm.Name)]
	d := w.Objects[objKey("Deployment", web.Name)]
	if o.State != present || !o.CheckContent || o.Value != "v1" || d.State != present {
		t.Fatalf("rendered objects: got %+v and %+v", o, d)
	}

	// Pinned: spec changes are not delivered; a rollback delivers the
	// snapshot.
	a.PV = "p1"
	a.PVSpec["p1"] = a.Spec.clone()
	cm.Value = "v2"
	a.Spec.Components[cm.Name] = cm
	w.settle(a, false)
	if o.Value != "v1" {
		t.Fatalf("pinned: want v1, got %s", o.Value)
	}
	a.PV = ""
	w.settle(a, false)
	if o.Value != "v2" {
		t.Fatalf("unpinned: want v2, got %s", o.Value)
	}

	// Kept by gc never after leaving the spec, and after the app goes.
	a.Spec.GC[cm.Name] = "never"
	delete(a.Spec.Components, cm.Name)
	w.settle(a, false)
	if o.State != present || !o.Kept || o.CheckContent {
		t.Fatalf("never, left the spec: got %+v", o)
	}
	// The rule removed after it left: it goes (no version renders it, no
	// rule keeps it); once gone, the app's deletion leaves it gone, and the
	// onAppDelete one goes with the app.
	delete(a.Spec.GC, cm.Name)
	w.settle(a, false)
	if o.State != absent || o.Kept {
		t.Fatalf("rule removed after leaving: got %v (kept %v)", o.State, o.Kept)
	}
	a.Spec.GC[web.Name] = "onAppDelete"
	w.settle(a, true)
	if o.State != absent || o.Untracked || d.State != absent {
		t.Fatalf("app deleted: got %v (untracked %v) and %v", o.State, o.Untracked, d.State)
	}

	// gc never survives the app, untracked; a new incarnation leaves it.
	b := w.Apps["beta"]
	b.Exists = true
	keep := component{Name: "beta-cm-3", Value: "v3"}
	b.Spec.Components[keep.Name] = keep
	b.Spec.GC[keep.Name] = "never"
	w.settle(b, false)
	w.settle(b, true)
	k := w.Objects[objKey("ConfigMap", keep.Name)]
	if k.State != present || !k.Untracked {
		t.Fatalf("never after app deletion: got %+v", k)
	}
	b.Spec = newSpec()
	b.Spec.Components["beta-cm-4"] = component{Name: "beta-cm-4", Value: "v4"}
	w.settle(b, false)
	if k.State != present || !k.Untracked {
		t.Fatalf("new incarnation: got %+v", k)
	}
	w.settle(b, true)
	if k.State != present {
		t.Fatalf("second deletion must not touch what the first left: got %+v", k)
	}

	// Dropped without a rule: garbage.
	g := w.Apps["gamma"]
	g.Exists = true
	g.Spec.Components["gamma-cm-5"] = component{Name: "gamma-cm-5", Value: "v5"}
	w.settle(g, false)
	delete(g.Spec.Components, "gamma-cm-5")
	w.settle(g, false)
	if s := w.Objects[objKey("ConfigMap", "gamma-cm-5")].State; s != absent {
		t.Fatalf("dropped: got %v", s)
	}
}
