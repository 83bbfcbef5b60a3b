package provider

import (
	"errors"
	"slices"
	"testing"
)

func asUnsupported(err error, u **UnsupportedError) bool { return errors.As(err, u) }

func TestDefaults_Actions(t *testing.T) {
	var got []string
	for k := range Defaults(HTTPOptions{}) {
		got = append(got, k)
	}
	slices.Sort(got)
	want := []string{"config.create", "config.delete", "config.list", "config.read", "email.send", "http.do", "util.log", "util.string"}
	if !slices.Equal(got, want) {
		t.Fatalf("actions %v, want %v", got, want)
	}
}
