package cueeval

import (
	"strings"
	"testing"
)

func statusReq(health, custom, details string) *Request {
	part := func(p, text string) *Source {
		if text == "" {
			return nil
		}
		return &Source{Kind: KindComponent, Name: "web", Part: p, Text: text}
	}
	return &Request{Status: &StatusInput{
		HealthPolicy: part(PartHealthPolicy, health),
		CustomStatus: part(PartCustomStatus, custom),
		Details:      part(PartDetails, details),
		Context:      []byte(`{"name":"web","output":{"status":{"readyReplicas":2}}}`),
		Params:       []byte(`{"replicas":3}`),
	}}
}

// TestLocal_StatusPartsSeeContextStatus: as in KubeVela, details is
// evaluated first and its concrete fields ("$" ones too) are
// context.status.details for healthPolicy and customStatus, and
// healthPolicy's result is context.status.healthy for customStatus.
func TestLocal_StatusPartsSeeContextStatus(t *testing.T) {
	const details = `ready: context.output.status.readyReplicas
$want: parameter.replicas
_hidden: 1
secret: "s" @private()
`
	tests := []struct {
		name, health, custom, details string
		healthy                       bool
		message, err                  string
		wantDetails                   map[string]string
	}{
		{name: "health and message read details",
			health:  `isHealth: context.status.details.ready >= context.status.details.$want`,
			custom:  `message: "\(context.status.details.ready)/\(context.status.details.$want) ready, healthy: \(context.status.healthy)"`,
			details: details, healthy: false, message: "2/3 ready, healthy: false",
			wantDetails: map[string]string{"ready": "2"}},
		{name: "healthy is true without a healthPolicy",
			custom:  `message: "healthy: \(context.status.healthy), ready: \(context.status.details.ready)"`,
			details: details, healthy: true, message: "healthy: true, ready: 2",
			wantDetails: map[string]string{"ready": "2"}},
		{name: "a failed healthPolicy is healthy: false",
			health: `isHealth: context.output.status.nope > 0`, custom: `message: "healthy: \(context.status.healthy)"`,
			healthy: false, message: "healthy: false", err: "nope"},
		{name: "private details are not passed on",
			health:  `isHealth: context.status.details.secret == "s"`,
			details: details, healthy: false, err: "secret"},
		{name: "without details there are none to read",
			health: `isHealth: context.status.details.ready > 0`, healthy: false, err: "details"},
		{name: "details see an empty status",
			details: "n: len(context.status)\n", healthy: true, wantDetails: map[string]string{"n": "0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := NewLocal(0).Evaluate(statusReq(tt.health, tt.custom, tt.details))
			if err != nil {
				t.Fatal(err)
			}
			s := res.Status
			if s.Healthy != tt.healthy || s.Message != tt.message {
				t.Errorf("got healthy %v message %q, want %v %q (%+v)", s.Healthy, s.Message, tt.healthy, tt.message, s)
			}
			if tt.err == "" && s.HealthErr+s.MessageErr+s.DetailsErr != "" {
				t.Errorf("errors: %+v", s)
			}
			if tt.err != "" && !strings.Contains(s.HealthErr, tt.err) {
				t.Errorf("health error %q, want it to name %q", s.HealthErr, tt.err)
			}
			if tt.wantDetails != nil && len(s.Details) != len(tt.wantDetails) {
				t.Errorf("details %v, want %v", s.Details, tt.wantDetails)
			}
			for k, v := range tt.wantDetails {
				if s.Details[k] != v {
					t.Errorf("details %v, want %v", s.Details, tt.wantDetails)
				}
			}
		})
	}
}
