package fn

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"

	"github.com/inferno-ai/function-inferno/internal/resolve"
)

// TestObjectsPerClaim holds the largest claims the schema and the function
// admit to the bound docs/configuration.md states ("Objects per claim"):
// every feature that composes objects on at once, each list at its
// schema's MaxItems, settled through pull and serving.
func TestObjectsPerClaim(t *testing.T) {
	b, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`at most \*\*(\d+) composed objects\*\*`).FindSubmatch(b)
	if m == nil {
		t.Fatal(`docs/configuration.md states no bound ("at most **N composed objects**")`)
	}
	bound, _ := strconv.Atoi(string(m[1]))

	everything := map[string]any{
		"networkPolicy": map[string]any{"enabled": true, "metricsNamespace": "monitoring"},
		"pullProgress":  map[string]any{"enabled": true, "intervalSeconds": 5},
		"monitoring":    map[string]any{"podMonitor": map[string]any{"enabled": true}},
		// The most surge groups a rollout may add: one per group.
		"rollout": map[string]any{"maxSurge": "100%"},
		"traffic": map[string]any{"gateway": map[string]any{"name": "inference", "namespace": "gateways", "domain": "models.example.com"}},
	}
	versions := make([]any, 8)
	for i := range versions {
		v := map[string]any{"version": strconv.Itoa(i + 1), "weight": 10}
		if i > 0 {
			v["uri"] = "hf://org/model-" + strconv.Itoa(i+1)
		}
		versions[i] = v
	}
	versions[0].(map[string]any)["weight"] = 30
	adapters := make([]any, 16)
	for i := range adapters {
		adapters[i] = map[string]any{"name": "a" + strconv.Itoa(i), "uri": "hf://org/adapter-" + strconv.Itoa(i)}
	}
	cases := map[string]func(xr map[string]any){
		"EightVersions": func(xr map[string]any) {
			setPath(xr, "1", "spec", "model", "version")
			setPath(xr, versions, "spec", "traffic")
			setPath(xr, map[string]any{"min": 8, "max": 16}, "spec", "replicas")
			setPath(xr, map[string]any{"enabled": true}, "spec", "autoscaling")
		},
		"SixteenAdapters": func(xr map[string]any) {
			setPath(xr, adapters, "spec", "adapters")
			setPath(xr, map[string]any{"min": 2, "max": 16}, "spec", "replicas")
			setPath(xr, map[string]any{"enabled": true}, "spec", "autoscaling")
		},
		"MostGroups": func(xr map[string]any) {
			setPath(xr, 2, "spec", "nodes")
			setPath(xr, "ReadWriteMany", "spec", "storage", "accessMode")
			setPath(xr, map[string]any{"min": resolve.MaxGroups}, "spec", "replicas")
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			edit(xr)
			fresh := run(t, newRequest(t, xr, everything))
			settled, _ := settle(t, xr, everything, world{}, nil)
			for stage, rsp := range map[string]*fnv1.RunFunctionResponse{"fresh": fresh, "serving": settled} {
				if msg := fatalMessage(rsp); msg != "" {
					t.Fatalf("%s: refused: %s", stage, msg)
				}
				n := len(rsp.GetDesired().GetResources())
				t.Logf("%s, %s: %d composed objects", name, stage, n)
				if n > bound {
					t.Errorf("%s: %d composed objects, over the %d docs/configuration.md states: %v", stage, n, bound, desiredNames(rsp))
				}
			}
		})
	}
}
