package watch

import "testing"

// Decimal resourceVersions are held exactly; any other is held so that it
// equals itself only, never a number, never "deleted" or "none".
func TestVersionOf_EqualOnlyForTheSameResourceVersion(t *testing.T) {
	for _, rv := range []string{"1", "42", "9223372036854775807"} {
		if got := versionOf(rv).String(); got != rv {
			t.Errorf("versionOf(%q).String() = %q", rv, got)
		}
	}
	distinct := []string{"", "7", "007", "+7", "0", "7a", "opaque", "9223372036854775808", "18446744073709551615"}
	seen := map[version]string{}
	for _, rv := range distinct {
		v := versionOf(rv)
		if other, dup := seen[v]; dup {
			t.Errorf("%q and %q are the same version", rv, other)
		}
		seen[v] = rv
		if v == deleted || (rv != "" && v == none) {
			t.Errorf("versionOf(%q) = %v, a reserved value", rv, v)
		}
		if versionOf(rv) != v {
			t.Errorf("versionOf(%q) is not stable", rv)
		}
	}
}

// A read resourceVersion and the one Unchanged reports for it agree.
func TestResourceVersionKey_IsWhatUnchangedReports(t *testing.T) {
	for _, rv := range []string{"42", "opaque", "007"} {
		if got, want := ResourceVersionKey(rv), versionOf(rv).String(); got != want {
			t.Errorf("ResourceVersionKey(%q) = %q, Unchanged reports %q", rv, got, want)
		}
	}
}
