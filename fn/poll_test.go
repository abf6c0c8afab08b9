package fn

import (
	"testing"
	"time"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
)

// TestPollWhileWatchCut holds the response's TTL to input.poll: none
// while Crossplane watches everything the call read, the interval while
// it watches the composite but not a required resource whose change
// would go unseen (before v2.4), and soon while its circuit breaker has
// cut the watch (Responsive=False, WatchCircuitOpen), sooner while
// something is not ready.
func TestPollWhileWatchCut(t *testing.T) {
	responsive := func(status, reason string) []any {
		return []any{
			map[string]any{"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
			map[string]any{"type": "Responsive", "status": status, "reason": reason,
				"message": "Too many watch events from Deployment/x (team-a). Allowing events periodically."},
		}
	}
	cut := responsive("False", "WatchCircuitOpen")
	poll := func(p map[string]any) func(map[string]any) {
		return func(in map[string]any) { in["poll"] = p }
	}
	cases := []struct {
		name       string
		conditions []any
		stage      string // "" for a fresh claim, not ready
		input      func(map[string]any)
		want       time.Duration
	}{
		// examples/xr.yaml requires its credentials Secret and its
		// Services' names, whose change alone changes nothing.
		{name: "watched, changing", want: 0},
		{name: "watched, changing, required resources watched", input: poll(map[string]any{"requiredResourcesWatched": true}), want: 0},
		{name: "watched, settled: no poll", stage: "serving", want: 0},
		{name: "watched, settled, the platform's drift check", stage: "serving",
			input: poll(map[string]any{"watchedIntervalSeconds": 3600}), want: time.Hour},
		{name: "responsive", conditions: responsive("True", "WatchCircuitClosed"), want: 0},
		{name: "unresponsive for another reason", conditions: responsive("False", "SomethingElse"), want: 0},
		{name: "cut, changing", conditions: cut, want: 2 * time.Second},
		{name: "cut, changing, mid-pull", conditions: cut, stage: "pulling", want: 2 * time.Second},
		{name: "cut, settled", conditions: cut, stage: "serving", want: 3 * time.Second},
		{name: "cut, the platform's polls", conditions: cut, stage: "serving",
			input: poll(map[string]any{"intervalSeconds": 120, "watchCutSettledSeconds": 10}), want: 10 * time.Second},
		{name: "cut, settled polls off", conditions: cut, stage: "serving",
			input: poll(map[string]any{"watchCutSettledSeconds": 0}), want: time.Minute},
		{name: "cut, changing polls off", conditions: cut,
			input: poll(map[string]any{"watchCutChangingSeconds": 0}), want: time.Minute},
		{name: "cut, a poll longer than the interval", conditions: cut,
			input: poll(map[string]any{"intervalSeconds": 1, "watchCutChangingSeconds": 2}), want: time.Second},
		{name: "watched, changing, the platform's drift check",
			input: poll(map[string]any{"intervalSeconds": 300, "watchedIntervalSeconds": 600}), want: 10 * time.Minute},
		{name: "cut, required resources watched", conditions: cut, input: poll(map[string]any{"requiredResourcesWatched": true}), want: 2 * time.Second},
		{name: "conditions that do not decode", conditions: []any{"Responsive"}, want: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			xr := readYAML(t, "../examples/xr.yaml")
			in := compositionInput(t)
			if tc.input != nil {
				tc.input(in)
			}
			var observed []observedObject
			if tc.stage != "" {
				var ok bool
				observed, ok = stageObserved(t, xr, in, tc.stage)
				if !ok {
					t.Fatalf("no %s stage", tc.stage)
				}
			}
			if tc.conditions != nil {
				setPath(xr, tc.conditions, "status", "conditions")
			}
			rsp := run(t, newRequest(t, xr, in, observed...))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			if diff := cmp.Diff(tc.want, rsp.GetMeta().GetTtl().AsDuration()); diff != "" {
				t.Errorf("TTL (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPollWhileChanging: while the watch is cut, a promotion that make
// before break holds is changing though every object is ready (the
// canary's warm server kept until the primary has its share): the
// function polls at the changing interval until it is done, then at the
// settled one.
func TestPollWhileChanging(t *testing.T) {
	cut := []any{map[string]any{"type": "Responsive", "status": "False", "reason": "WatchCircuitOpen"}}
	_, start := settle(t, canaryXR(t), nil, world{}, nil)
	xr := promoted(t, true)
	setPath(xr, cut, "status", "conditions")
	steps := walk(t, xr, nil, world{}, start)
	readyButChanging, settled := 0, false
	for i, st := range steps {
		ttl := st.rsp.GetMeta().GetTtl().AsDuration()
		ready := st.rsp.GetDesired().GetComposite().GetReady() == fnv1.Ready_READY_TRUE
		switch {
		case ttl == 3*time.Second && ready:
			settled = true
		case settled:
			t.Errorf("step %d: TTL %v and composite ready %v after the promotion settled", i, ttl, ready)
		case ttl != 2*time.Second:
			t.Errorf("step %d of the promotion: TTL %v, want 2s", i, ttl)
		case ready:
			readyButChanging++
		}
	}
	if !settled {
		t.Error("the promotion never settled at the 3s poll")
	}
	if readyButChanging == 0 {
		t.Error("no step had every object ready while the promotion was under way: the test proves nothing about Changing")
	}
}

// TestPollOnCache: a service on a ModelCache, settled or waiting for the
// cache, polls at the interval on a Crossplane that does not watch
// required resources, since a new revision or the readiness of the cache
// would otherwise go unseen, and not at all on one that does
// (input.poll.requiredResourcesWatched).
func TestPollOnCache(t *testing.T) {
	ready, _ := settle(t, readYAML(t, cacheXRPath), nil, world{}, nil)
	claim := cacheClaim(t, ready)
	for _, tc := range []struct {
		name  string
		input map[string]any
		want  time.Duration
	}{
		{name: "before v2.4", want: time.Minute},
		{name: "required resources watched", input: map[string]any{"poll": map[string]any{"requiredResourcesWatched": true}}, want: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := compositionInput(t)
			for k, v := range tc.input {
				in[k] = v
			}
			waiting := run(t, newRequest(t, readYAML(t, onCacheXRPath), in))
			if diff := cmp.Diff(tc.want, waiting.GetMeta().GetTtl().AsDuration()); diff != "" {
				t.Errorf("TTL while the cache is not fetched yet (-want +got):\n%s", diff)
			}
			rsp, _ := settle(t, readYAML(t, onCacheXRPath), in, world{}, nil, claim)
			if st := statusOf(rsp); st["phase"] != "Serving" {
				t.Fatalf("phase %v, want Serving: %v", st["phase"], st["message"])
			}
			if diff := cmp.Diff(tc.want, rsp.GetMeta().GetTtl().AsDuration()); diff != "" {
				t.Errorf("TTL of the settled service (-want +got):\n%s", diff)
			}
		})
	}
}
