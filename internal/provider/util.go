package provider

import (
	"context"
	"encoding/json"
	"fmt"
)

// Util returns the `vela/util` actions Steward carries out:
// "util.string" and "util.log". "util.patch-k8s-object" is not among
// them: KubeVela patches with CUE's strategic unification (+patchKey
// comments), which JSON $params cannot carry.
func Util() Registry {
	return Registry{
		"util.string": utilString,
		"util.log":    utilLog,
	}
}

// utilString turns bytes into a string: CUE bytes arrive in JSON as
// standard base64.
func utilString(_ context.Context, _ *Env, raw json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Bt []byte `json:"bt"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("util.string: invalid $params (bt must be bytes, base64 in JSON): %w", err)
	}
	return json.Marshal(map[string]string{"str": string(p.Bt)})
}

// utilLog writes data to the step's log at verbosity 1, with the step's
// name and, when given, the level and source KubeVela's template names
// (KubeVela also keeps the source for `vela workflow logs`, which
// Steward has no counterpart of).
func utilLog(_ context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
	var p struct {
		Data   json.RawMessage `json:"data"`
		Level  *int            `json:"level"`
		Source json.RawMessage `json:"source"`
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("util.log: invalid $params: %w", err)
	}
	kv := []any{"app", env.App, "namespace", env.Namespace, "step", env.Step}
	if p.Level != nil {
		kv = append(kv, "level", *p.Level)
	}
	if len(p.Source) > 0 && string(p.Source) != "null" {
		kv = append(kv, "source", string(p.Source))
	}
	if len(p.Data) == 0 || string(p.Data) == "null" {
		if len(kv) > 6 {
			env.Log.V(1).Info("step log source", kv...)
		}
		return nil, nil
	}
	msg := string(p.Data)
	var s string
	if json.Unmarshal(p.Data, &s) == nil {
		msg = s
	}
	env.Log.V(1).Info(msg, kv...)
	return nil, nil
}
