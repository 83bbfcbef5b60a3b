package tracker

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"
)

func TestName_NeverCollidesBetweenAppNamespacePairs(t *testing.T) {
	pairs := [][2]string{{"a-b", "c"}, {"a", "b-c"}, {"a.b", "c"}, {"a", "b"}, {"x.y", "root"}, {"x", "y"}}
	kinds := []Kind{Root(), Versioned(1), ComponentRevision(), Published("v1"), Published("V1")}
	seen := map[string]string{}
	for _, p := range pairs {
		for _, k := range kinds {
			n := Name(p[0], p[1], k)
			id := p[0] + "/" + p[1] + "/" + k.suffix()
			if other, ok := seen[n]; ok {
				t.Errorf("%s and %s share the name %s", id, other, n)
			}
			seen[n] = id
			if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
				t.Errorf("%s: %v", n, errs)
			}
		}
	}
}

func TestName_LongNamesStayValidAndDistinct(t *testing.T) {
	long := strings.Repeat("a", 250)
	n1 := Name(long, "ns", Versioned(12))
	n2 := Name(long+"b", "ns", Versioned(12))
	if n1 == n2 {
		t.Error("long names collide")
	}
	for _, n := range []string{n1, n2, Name(long, "ns", Published("Release 2026/11 candidate with a long description"))} {
		if errs := validation.IsDNS1123Subdomain(n); len(errs) > 0 {
			t.Errorf("%s: %v", n, errs)
		}
	}
}
