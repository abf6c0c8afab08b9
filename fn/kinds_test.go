package fn

import (
	"sort"
	"testing"

	"github.com/inferno-ai/function-inferno/internal/render"
)

// TestKindsJudgeEveryComposedKind: every kind of every golden render is in
// render.Kinds, so render.Judged never leaves an object not ready for want
// of a rule; and every kind in render.Kinds is rendered by some golden, so
// the table holds no kind the function no longer composes.
func TestKindsJudgeEveryComposedKind(t *testing.T) {
	rendered := goldenKinds(t)
	for gvk, golden := range rendered {
		if _, ok := render.Kinds[gvk]; !ok {
			t.Errorf("%s renders %s, which has no entry in render.Kinds", golden, gvk)
		}
	}
	var stale []string
	for gvk := range render.Kinds {
		if _, ok := rendered[gvk]; !ok {
			stale = append(stale, gvk.String())
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("render.Kinds has kinds no golden renders: %v", stale)
	}
}
