package fn

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/inferno-ai/function-inferno/internal/render"
)

// The progress example: examples/xr.yaml under a Composition whose Input
// turns on pull progress and PodMonitors.
const progressDir = "../examples/progress"

// TestProgressGolden renders examples/xr.yaml with the progress example's
// Input fresh and pulling (its pull pod has reported 3.1 of 15.0 GiB), and
// compares them with fn/testdata/golden/progress-*.yaml. With -update it
// rewrites them and examples/progress/observed/pulling.yaml.
func TestProgressGolden(t *testing.T) {
	comp := readYAML(t, filepath.Join(progressDir, "composition.yaml"))
	steps, _ := nested(comp, "spec", "pipeline")
	in, _ := steps.([]any)[0].(map[string]any)["input"].(map[string]any)
	xr := readYAML(t, "../examples/xr.yaml")
	fresh := run(t, newRequest(t, xr, in))
	if msg := fatalMessage(fresh); msg != "" {
		t.Fatalf("the progress example is refused: %s", msg)
	}
	t.Run("fresh", func(t *testing.T) { compareGolden(t, "progress-fresh", fresh) })
	t.Run("pulling", func(t *testing.T) {
		var obs []observedObject
		for _, n := range desiredNames(fresh) {
			var status map[string]any
			switch {
			case n == render.ResourcePVC:
				status = map[string]any{"phase": "Bound"}
			case strings.HasPrefix(n, render.ResourceJobPrefix):
				status = map[string]any{"active": 1}
			}
			o := observedFrom(t, fresh, n, status)
			if render.IsProgressConfigMap(n) {
				o.Object["data"] = map[string]any{
					"bytes": "3328599655", "total": "16106127360", "rate": "125829120",
					"startedAt": "2026-12-03T10:00:00Z", "updatedAt": "2026-12-03T10:00:27Z",
				}
			}
			obs = append(obs, o)
		}
		fixture := filepath.Join(progressDir, "observed", "pulling.yaml")
		if *update {
			writeObserved(t, fixture, "examples/xr.yaml with examples/progress/composition.yaml", "pulling", obs)
		}
		rsp := run(t, newRequest(t, xr, in, readObserved(t, fixture)...))
		st := statusOf(rsp)
		if msg, _ := st["message"].(string); st["phase"] != "Pulling" || !strings.Contains(msg, "3.1 of 15.0 GiB (20%), 120.0 MiB/s, ETA 2m") {
			t.Errorf("phase %v message %q, want Pulling with the report", st["phase"], msg)
		}
		compareGolden(t, "progress-pulling", rsp)
	})
}
