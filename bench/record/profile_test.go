package record

import "testing"

func TestManagedConfig_Validate(t *testing.T) {
	for _, c := range []ManagedConfig{FullProfile().Managed, QuickProfile().Managed} {
		if err := c.Validate(); err != nil {
			t.Errorf("profile levels: %v", err)
		}
	}
	for _, levels := range [][]int{nil, {1000, 500}, {1001}} {
		if err := (ManagedConfig{ResourcesPer: 8, Levels: levels}).Validate(); err == nil {
			t.Errorf("levels %v: no error", levels)
		}
	}
}
