package placement

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/steward-oam/steward/api/v1beta1"
)

// components are a web service with two traits and a worker.
func components() []v1beta1.ApplicationComponent {
	return []v1beta1.ApplicationComponent{{
		Name: "web", Type: "webservice",
		Properties: raw(`{"image": "web:1", "ports": [{"port": 80}], "env": {"A": "1", "B": "2"}}`),
		Traits: []v1beta1.ApplicationTrait{
			{Type: "scaler", Properties: raw(`{"replicas": 1}`)},
			{Type: "expose", Properties: raw(`{"port": [80]}`)},
		},
		DependsOn: []string{"db"},
	}, {
		Name: "db", Type: "worker", Properties: raw(`{"image": "db:1"}`),
	}}
}

// describe renders components compactly: name(type) properties [trait props ...].
func describe(comps []v1beta1.ApplicationComponent) string {
	var parts []string
	for _, c := range comps {
		s := c.Name + "(" + c.Type + ") " + compact(c.Properties.Raw)
		for _, t := range c.Traits {
			s += " " + t.Type + compact(t.Properties.Raw)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

func compact(b []byte) string {
	if b == nil {
		return "null"
	}
	var v any
	_ = json.Unmarshal(b, &v)
	out, _ := json.Marshal(v)
	return string(out)
}

func TestApplyOverrides(t *testing.T) {
	tests := []struct {
		name      string
		overrides []string
		want      string
		wantErr   string
	}{{
		name:      "properties merge, null deletes, lists replace",
		overrides: []string{`{"components": [{"name": "web", "properties": {"image": "web:2", "ports": [{"port": 8080}], "env": {"B": null, "C": "3"}}}]}`},
		want: `web(webservice) {"env":{"A":"1","C":"3"},"image":"web:2","ports":[{"port":8080}]} scaler{"replicas":1} expose{"port":[80]}; ` +
			`db(worker) {"image":"db:1"}`,
	}, {
		name:      "trait properties merge, new trait added, disabled trait removed",
		overrides: []string{`{"components": [{"name": "web", "traits": [{"type": "scaler", "properties": {"replicas": 3}}, {"type": "expose", "disable": true}, {"type": "labels", "properties": {"team": "a"}}]}]}`},
		want: `web(webservice) {"env":{"A":"1","B":"2"},"image":"web:1","ports":[{"port":80}]} scaler{"replicas":3} labels{"team":"a"}; ` +
			`db(worker) {"image":"db:1"}`,
	}, {
		name:      "disabling a missing trait does nothing",
		overrides: []string{`{"components": [{"name": "db", "traits": [{"type": "scaler", "disable": true}]}]}`},
		want:      `web(webservice) {"env":{"A":"1","B":"2"},"image":"web:1","ports":[{"port":80}]} scaler{"replicas":1} expose{"port":[80]}; db(worker) {"image":"db:1"}`,
	}, {
		name:      "a new type replaces type and properties, keeps traits",
		overrides: []string{`{"components": [{"name": "web", "type": "worker", "properties": {"image": "w:1"}}]}`},
		want:      `web(worker) {"image":"w:1"} scaler{"replicas":1} expose{"port":[80]}; db(worker) {"image":"db:1"}`,
	}, {
		name:      "no name: every component",
		overrides: []string{`{"components": [{"properties": {"image": "mirror/all"}}]}`},
		want:      `web(webservice) {"env":{"A":"1","B":"2"},"image":"mirror/all","ports":[{"port":80}]} scaler{"replicas":1} expose{"port":[80]}; db(worker) {"image":"mirror/all"}`,
	}, {
		name:      "no name with a type: every component of that type",
		overrides: []string{`{"components": [{"type": "worker", "properties": {"image": "db:2"}}]}`},
		want:      `web(webservice) {"env":{"A":"1","B":"2"},"image":"web:1","ports":[{"port":80}]} scaler{"replicas":1} expose{"port":[80]}; db(worker) {"image":"db:2"}`,
	}, {
		name:      "name pattern",
		overrides: []string{`{"components": [{"name": "d*", "properties": {"image": "db:3"}}]}`},
		want:      `web(webservice) {"env":{"A":"1","B":"2"},"image":"web:1","ports":[{"port":80}]} scaler{"replicas":1} expose{"port":[80]}; db(worker) {"image":"db:3"}`,
	}, {
		name:      "unknown name with a type adds a component",
		overrides: []string{`{"components": [{"name": "cache", "type": "worker", "properties": {"image": "redis"}, "traits": [{"type": "scaler", "properties": {"replicas": 2}}]}]}`},
		want: `web(webservice) {"env":{"A":"1","B":"2"},"image":"web:1","ports":[{"port":80}]} scaler{"replicas":1} expose{"port":[80]}; ` +
			`db(worker) {"image":"db:1"}; cache(worker) {"image":"redis"} scaler{"replicas":2}`,
	}, {
		name:      "selector keeps the named components in their order",
		overrides: []string{`{"components": [], "selector": ["db"]}`},
		want:      `db(worker) {"image":"db:1"}`,
	}, {
		name: "policies apply in order",
		overrides: []string{
			`{"components": [{"name": "db", "properties": {"image": "db:2", "tier": "gold"}}]}`,
			`{"components": [{"name": "db", "properties": {"image": "db:3"}}], "selector": ["db"]}`,
		},
		want: `db(worker) {"image":"db:3","tier":"gold"}`,
	}, {
		name:      "unknown name without type",
		overrides: []string{`{"components": [{"name": "cache", "properties": {}}]}`},
		wantErr:   `override policy "o1": components[0]: the application has no component "cache"; set type to add it`,
	}, {
		name:      "selector names a missing component",
		overrides: []string{`{"components": [], "selector": ["cache"]}`},
		wantErr:   `override policy "o1": selector names component "cache", which the application does not have`,
	}, {
		name:      "properties must be an object",
		overrides: []string{`{"components": [{"name": "web", "properties": "big"}]}`},
		wantErr:   `override policy "o1": components[0]: properties: want an object, got "big"`,
	}, {
		name:      "unknown field",
		overrides: []string{`{"components": [{"name": "web", "trait": []}]}`},
		wantErr:   `override policy "o1": properties: json: unknown field "trait"`,
	}, {
		name:      "bad pattern",
		overrides: []string{`{"components": [{"name": "[*"}]}`},
		wantErr:   `override policy "o1": components[0]: name pattern "[*"`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pols []v1beta1.AppPolicy
			for i, o := range tt.overrides {
				pols = append(pols, pol("o"+string(rune('1'+i)), v1beta1.PolicyTypeOverride, o))
			}
			in := components()
			before := describe(in)
			got, err := ApplyOverrides(in, pols)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d := describe(got); d != tt.want {
				t.Fatalf("got  %s\nwant %s", d, tt.want)
			}
			if describe(in) != before {
				t.Fatal("ApplyOverrides modified its input")
			}
		})
	}
}

func TestApplyOverrides_KeepsUntouchedPropertiesByteForByte(t *testing.T) {
	in := components()
	got, err := ApplyOverrides(in, []v1beta1.AppPolicy{pol("o", v1beta1.PolicyTypeOverride, `{"components": [{"name": "web", "traits": [{"type": "scaler", "properties": {"replicas": 2}}]}]}`)})
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Properties.Raw) != string(in[0].Properties.Raw) || got[0].DependsOn[0] != "db" {
		t.Fatalf("untouched fields changed: %s %v", got[0].Properties.Raw, got[0].DependsOn)
	}
}

func TestStep_Components(t *testing.T) {
	a := app([]v1beta1.AppPolicy{pol("o", v1beta1.PolicyTypeOverride, `{"components": [{"name": "web", "properties": {"replicas": 3}}]}`)})
	steps, err := Resolve(a, registry)
	if err != nil {
		t.Fatal(err)
	}
	comps, err := steps[0].Components(a)
	if err != nil {
		t.Fatal(err)
	}
	if string(comps[0].Properties.Raw) != `{"replicas":3}` {
		t.Fatalf("properties = %s", comps[0].Properties.Raw)
	}
}
