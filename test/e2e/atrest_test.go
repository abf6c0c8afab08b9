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
// longer than Crossplane's poll interval (1 minute), over which Crossplane
// calls the function for each of them at least once. A function whose
// output moved at rest — a status field, a condition's message, an
// object's field — would show as a changed composite.
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
	sc.note("%d Ready composites and %d claims over %s at rest (one poll or more each): %d composites and %d claims changed",
		len(xrs), len(claims), rest, len(changedXRs), len(changedClaims))
	if len(changedXRs) > 0 {
		t.Errorf("composites changed at rest: %s", strings.Join(changedXRs, ", "))
	}
	if len(changedClaims) > 0 {
		t.Errorf("claims changed at rest: %s", strings.Join(changedClaims, ", "))
	}
}

// readyVersions maps every Ready composite (or claim) to its
// resourceVersion.
func readyVersions(ctx context.Context, t *testing.T, composites bool) map[string]string {
	t.Helper()
	gvk := claimGVK
	if composites {
		gvk = xrGVK
	}
	l, err := env.admin.List(ctx, gvk, "", "")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i := range l {
		if st, _, _ := kube.Condition(&l[i], "Ready"); st == "True" {
			out[l[i].GetNamespace()+"/"+l[i].GetName()] = l[i].GetResourceVersion()
		}
	}
	return out
}

func changedSince(ctx context.Context, t *testing.T, composites bool, before map[string]string) []string {
	t.Helper()
	gvk := claimGVK
	if composites {
		gvk = xrGVK
	}
	l, err := env.admin.List(ctx, gvk, "", "")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := range l {
		key := l[i].GetNamespace() + "/" + l[i].GetName()
		if rv, ok := before[key]; ok && rv != l[i].GetResourceVersion() {
			out = append(out, fmt.Sprintf("%s (%s → %s; %s)", key, rv, l[i].GetResourceVersion(), kube.ConditionsSummary(&l[i])))
		}
	}
	sort.Strings(out)
	return out
}
