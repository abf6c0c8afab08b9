package fn

import (
	"fmt"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
)

// TestConditionsChangeWithTheirReason: through a canary's add, shift,
// promotion and rollback, step by step as the servers come and go, each
// condition's message changes only when its reason or status does.
// Crossplane writes the function's status fields and its conditions in two
// writes of the composite, and every write is two watch events against its
// circuit breaker: the counts of the moment belong in the status fields
// (status.message, readyReplicas, traffic), so that a server more or less
// is one write, not two (reason.Condition.Detail).
func TestConditionsChangeWithTheirReason(t *testing.T) {
	plain := canaryXR(t)
	delete(plain["spec"].(map[string]any), "traffic")
	_, start := settle(t, plain, nil, world{}, nil)
	walks := []struct {
		name string
		xr   map[string]any
	}{
		{"add 90/10", canaryAt(t, 90, 10)},
		{"shift 10/90", canaryAt(t, 10, 90)},
		{"promote", promoted(t, true)},
		{"roll back", canaryAt(t, 90, 10)},
	}
	checked := 0
	for _, w := range walks {
		steps := walk(t, w.xr, nil, world{}, start)
		var prev *fnv1.RunFunctionResponse
		for i, st := range steps {
			if prev != nil {
				checked += sameReasonSameMessage(t, fmt.Sprintf("%s, step %d", w.name, i), prev, st.rsp)
			}
			prev = st.rsp
		}
		start = observeAll(t, steps[len(steps)-1].rsp, world{})
	}
	if checked == 0 {
		t.Fatal("no pair of steps kept a condition's reason: the walks prove nothing")
	}
}

// sameReasonSameMessage fails where a condition kept its reason and status
// from a to b but changed its message; it returns how many it compared.
func sameReasonSameMessage(t *testing.T, at string, a, b *fnv1.RunFunctionResponse) int {
	t.Helper()
	before := map[string]*fnv1.Condition{}
	for _, c := range a.GetConditions() {
		before[c.GetType()] = c
	}
	n := 0
	for _, c := range b.GetConditions() {
		p := before[c.GetType()]
		if p == nil || p.GetReason() != c.GetReason() || p.GetStatus() != c.GetStatus() {
			continue
		}
		n++
		if p.GetMessage() != c.GetMessage() {
			t.Errorf("%s: %s stayed %s but its message changed from %q to %q", at, c.GetType(), c.GetReason(), p.GetMessage(), c.GetMessage())
		}
	}
	return n
}
