//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 22 at rest ------------------------------------------------------------

// atRest holds the README's "no status churn" to a measurement: every
// composite that is Ready, and its claim, keeps its resourceVersion for
// longer than the 1-minute poll the function asked for until
// input.poll.watchedIntervalSeconds (now none: a settled composite is
// called only on events, so any call in that time follows a write). A
// function whose output moved at rest — a status field, a condition's
// message, an object's field — would show as a changed composite.
func (s *infernoSuite) atRest(t *testing.T) {
	ctx := context.Background()
	sc := env.summary.start(t, "22 at rest: no churn")
	sc.onRealNode(true)
	xrs := readyVersions(ctx, t, true)
	claims := readyVersions(ctx, t, false)
	if len(xrs) == 0 {
		t.Skip("no Ready composite to watch")
	}
	const rest = 70 * time.Second
	time.Sleep(rest)
	changedXRs := changedSince(ctx, t, true, xrs)
	changedClaims := changedSince(ctx, t, false, claims)
	sc.note("%d Ready composites and %d claims over %s at rest: %d composites and %d claims changed",
		len(xrs), len(claims), rest, len(changedXRs), len(changedClaims))
	if len(changedXRs) > 0 {
		t.Errorf("composites changed at rest: %s", strings.Join(changedXRs, ", "))
	}
	if len(changedClaims) > 0 {
		t.Errorf("claims changed at rest: %s", strings.Join(changedClaims, ", "))
	}
}

// observedVersion is one object's resourceVersion and what it said.
type observedVersion struct {
	RV, Summary string
	Ready       bool
}

// versionsOf maps every composite (or claim) to its resourceVersion.
func versionsOf(ctx context.Context, t *testing.T, composites bool) map[string]observedVersion {
	t.Helper()
	gvk := claimGVK
	if composites {
		gvk = xrGVK
	}
	l, err := env.admin.List(ctx, gvk, "", "")
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]observedVersion, len(l))
	for i := range l {
		st, _, _ := kube.Condition(&l[i], "Ready")
		out[l[i].GetNamespace()+"/"+l[i].GetName()] = observedVersion{RV: l[i].GetResourceVersion(), Ready: st == "True", Summary: kube.ConditionsSummary(&l[i])}
	}
	return out
}

// readyVersions is versionsOf the Ready ones only.
func readyVersions(ctx context.Context, t *testing.T, composites bool) map[string]observedVersion {
	t.Helper()
	out := versionsOf(ctx, t, composites)
	for k, v := range out {
		if !v.Ready {
			delete(out, k)
		}
	}
	return out
}

func changedSince(ctx context.Context, t *testing.T, composites bool, before map[string]observedVersion) []string {
	t.Helper()
	var out []string
	for key, now := range versionsOf(ctx, t, composites) {
		if b, ok := before[key]; ok && b.RV != now.RV {
			out = append(out, fmt.Sprintf("%s (%s → %s; %s)", key, b.RV, now.RV, now.Summary))
		}
	}
	sort.Strings(out)
	return out
}
