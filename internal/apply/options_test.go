package apply

import (
	"reflect"
	"testing"
)

// Every field of Options moves its key, so that the digest StateKeep
// skips an unchanged object by changes when the way it would be applied
// does; nil and empty KeepLiveFields are one key, and the paths are
// delimited (["a b"] is not ["a", "b"]).
func TestOptionsAppendKey_EveryFieldCounts(t *testing.T) {
	zero := string(Options{}.AppendKey(nil))
	typ := reflect.TypeFor[Options]()
	for i := range typ.NumField() {
		var o Options
		f := reflect.ValueOf(&o).Elem().Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"spec.replicas"}))
		default:
			t.Fatalf("field %s of kind %s: teach AppendKey and this test about it", typ.Field(i).Name, f.Kind())
		}
		if string(o.AppendKey(nil)) == zero {
			t.Errorf("field %s does not change the key", typ.Field(i).Name)
		}
	}
	if got := string(Options{KeepLiveFields: []string{}}.AppendKey(nil)); got != zero {
		t.Errorf("empty KeepLiveFields %q, nil %q", got, zero)
	}
	one := string(Options{KeepLiveFields: []string{"a b"}}.AppendKey(nil))
	two := string(Options{KeepLiveFields: []string{"a", "b"}}.AppendKey(nil))
	if one == two {
		t.Errorf("[\"a b\"] and [\"a\", \"b\"] share the key %q", one)
	}
}
