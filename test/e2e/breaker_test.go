//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// Crossplane's XR circuit breaker (v2.4, internal/circuit) is a token
// bucket per composite: every watch event that maps to the composite
// takes a token, from a bucket of --circuit-breaker-burst (100) refilled
// at --circuit-breaker-refill-rate (1 a second); an empty bucket opens the
// breaker, which then drops the composite's events for
// --circuit-breaker-cooldown (5 minutes) but for one every half-open
// interval, and the composite moves on its requeues and polls alone.
// controller-runtime hands an update to the map function twice (the old
// object and the new), so an update takes two tokens; a create or a
// delete one; an update that marks an object for deletion none.
//
// xrEvents watches what feeds one claim's composite: the composite itself
// and every object in its resourceRefs, and counts their events by source,
// so a step can say which sources emptied the bucket. Objects are counted
// only while the composite references them, as Crossplane's index maps
// them; the count is the API server's view, which is what Crossplane's
// informers receive.
type xrEvents struct {
	mu     sync.Mutex
	xr     string
	refs   map[string]bool // "Kind/name" of the composite's resourceRefs
	events []xrEvent
	last   *unstructured.Unstructured // the composite as last seen
}

// xrEvent is one watch event and the tokens it took.
type xrEvent struct {
	at     time.Time
	source string // "XR" or the composed object's Kind
	tokens int
	// changed are the composite's fields this update changed (XR only).
	changed []string
}

// composedKinds are the kinds a composite of ours may reference; kinds
// whose API the cluster does not serve are skipped.
var composedKinds = []schema.GroupVersionKind{
	{Group: "apps", Version: "v1", Kind: "Deployment"},
	{Version: "v1", Kind: "Service"},
	{Group: "autoscaling", Version: "v2", Kind: "HorizontalPodAutoscaler"},
	{Group: "batch", Version: "v1", Kind: "Job"},
	{Version: "v1", Kind: "PersistentVolumeClaim"},
	{Version: "v1", Kind: "ConfigMap"},
	{Version: "v1", Kind: "ServiceAccount"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "Role"},
	{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "RoleBinding"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "NetworkPolicy"},
	{Group: "gateway.networking.k8s.io", Version: "v1", Kind: "HTTPRoute"},
	{Group: "keda.sh", Version: "v1alpha1", Kind: "ScaledObject"},
}

// recordXREvents starts watching claim ns/name's composite (once the
// claim is bound to it) and the objects it composes, from then on.
func recordXREvents(ctx context.Context, t *testing.T, ns, name string) *xrEvents {
	t.Helper()
	var xr string
	if err := kube.Eventually(ctx, 30*time.Second, 100*time.Millisecond, "claim "+ns+"/"+name+" bound to a composite", func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, ns, name)
		if err != nil {
			return false, err.Error(), nil
		}
		xr, _, _ = unstructured.NestedString(c.Object, "spec", "resourceRef", "name")
		return xr != "", "not bound yet", nil
	}); err != nil {
		t.Fatal(err)
	}
	r := &xrEvents{xr: xr, refs: map[string]bool{}}
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	start := func(gvk schema.GroupVersionKind, ns string, opts metav1.ListOptions, record func(watch.Event)) {
		ri, err := env.admin.Resource(gvk, ns)
		if err != nil {
			return // not served here
		}
		l, err := ri.List(ctx, opts)
		if err != nil {
			return
		}
		if gvk == xrGVK {
			for i := range l.Items {
				r.setRefs(&l.Items[i])
				r.last = &l.Items[i]
			}
		}
		opts.ResourceVersion = l.GetResourceVersion()
		w, err := ri.Watch(ctx, opts)
		if err != nil {
			t.Logf("breaker events: no watch on %s: %v", gvk.Kind, err)
			return
		}
		go func() {
			defer w.Stop()
			for ev := range w.ResultChan() {
				record(ev)
			}
		}()
	}
	start(xrGVK, "", metav1.ListOptions{FieldSelector: "metadata.name=" + xr}, func(ev watch.Event) {
		if o, ok := ev.Object.(*unstructured.Unstructured); ok {
			r.setRefs(o)
			r.mu.Lock()
			changed := changedFields(r.last, o)
			r.last = o
			r.mu.Unlock()
			r.add("XR", ev.Type, o, changed...)
		}
	})
	for _, gvk := range composedKinds {
		start(gvk, ns, metav1.ListOptions{LabelSelector: instanceLabel + "=" + name}, func(ev watch.Event) {
			if o, ok := ev.Object.(*unstructured.Unstructured); ok && r.referenced(o.GetKind()+"/"+o.GetName()) {
				r.add(o.GetKind(), ev.Type, o)
			}
		})
	}
	return r
}

func (r *xrEvents) setRefs(xr *unstructured.Unstructured) {
	refs, _, _ := unstructured.NestedSlice(xr.Object, "spec", "resourceRefs")
	m := map[string]bool{}
	for _, ref := range refs {
		if ref, ok := ref.(map[string]any); ok {
			m[fmt.Sprint(ref["kind"])+"/"+fmt.Sprint(ref["name"])] = true
		}
	}
	r.mu.Lock()
	r.refs = m
	r.mu.Unlock()
}

func (r *xrEvents) referenced(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.refs[key]
}

func (r *xrEvents) add(source string, typ watch.EventType, o *unstructured.Unstructured, changed ...string) {
	tokens := 1
	switch {
	case typ == watch.Modified && o.GetDeletionTimestamp() != nil:
		tokens = 0
	case typ == watch.Modified:
		tokens = 2
	case typ != watch.Added && typ != watch.Deleted:
		return
	}
	r.mu.Lock()
	r.events = append(r.events, xrEvent{at: time.Now(), source: source, tokens: tokens, changed: changed})
	r.mu.Unlock()
}

// mark is a point to count from.
func (r *xrEvents) mark() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

// since says the events after mark by source, most tokens first, e.g.
// "58 events, 104 tokens (Deployment 31/60, XR 16/32, …); peak 74 tokens in 10s".
func (r *xrEvents) since(mark int) string {
	r.mu.Lock()
	evs := append([]xrEvent(nil), r.events[mark:]...)
	r.mu.Unlock()
	type count struct {
		source         string
		events, tokens int
	}
	by := map[string]*count{}
	total := 0
	for _, e := range evs {
		c := by[e.source]
		if c == nil {
			c = &count{source: e.source}
			by[e.source] = c
		}
		c.events++
		c.tokens += e.tokens
		total += e.tokens
	}
	cs := make([]*count, 0, len(by))
	for _, c := range by {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		if cs[i].tokens != cs[j].tokens {
			return cs[i].tokens > cs[j].tokens
		}
		return cs[i].source < cs[j].source
	})
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("%s %d/%d", c.source, c.events, c.tokens)
	}
	// The most tokens taken in any 10 s: against a burst of 100 and a
	// refill of 10 in that time, what opens the breaker.
	peak := 0
	for i := range evs {
		n := 0
		for j := i; j < len(evs) && evs[j].at.Sub(evs[i].at) < 10*time.Second; j++ {
			n += evs[j].tokens
		}
		peak = max(peak, n)
	}
	// Which of the composite's fields its own updates changed, most often
	// first: whose writes they were (the function's status, Crossplane's
	// references and conditions, the claim's sync).
	fields := map[string]int{}
	for _, e := range evs {
		for _, f := range e.changed {
			fields[f]++
		}
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if fields[keys[i]] != fields[keys[j]] {
			return fields[keys[i]] > fields[keys[j]]
		}
		return keys[i] < keys[j]
	})
	changed := make([]string, len(keys))
	for i, k := range keys {
		changed[i] = fmt.Sprintf("%s %d", k, fields[k])
	}
	return fmt.Sprintf("%d events, %d tokens (events/tokens: %s); peak %d tokens in 10s; the composite's updates changed: %s",
		len(evs), total, strings.Join(parts, ", "), peak, strings.Join(changed, ", "))
}

// changedFields names the fields that differ between two versions of a
// composite, two levels deep (status.message, status.conditions[Ready],
// spec.resourceRefs, metadata.labels), leaving out what every write
// changes (resourceVersion, managedFields).
func changedFields(old, cur *unstructured.Unstructured) []string {
	if old == nil || cur == nil {
		return nil
	}
	var out []string
	for _, top := range []string{"metadata", "spec", "status"} {
		a, _ := old.Object[top].(map[string]any)
		b, _ := cur.Object[top].(map[string]any)
		keys := map[string]bool{}
		for k := range a {
			keys[k] = true
		}
		for k := range b {
			keys[k] = true
		}
		for k := range keys {
			if top == "metadata" && (k == "resourceVersion" || k == "managedFields" || k == "generation") {
				continue
			}
			if k == "conditions" {
				out = append(out, changedConditions(a[k], b[k])...)
				continue
			}
			if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
				out = append(out, top+"."+k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// changedConditions names the conditions whose status, reason or message
// changed (a lastTransitionTime alone counts too).
func changedConditions(a, b any) []string {
	index := func(v any) map[string]string {
		m := map[string]string{}
		l, _ := v.([]any)
		for _, c := range l {
			if c, ok := c.(map[string]any); ok {
				m[fmt.Sprint(c["type"])] = fmt.Sprint(c)
			}
		}
		return m
	}
	ia, ib := index(a), index(b)
	var out []string
	for k, v := range ib {
		if ia[k] != v {
			out = append(out, "status.conditions["+k+"]")
		}
	}
	for k := range ia {
		if _, ok := ib[k]; !ok {
			out = append(out, "status.conditions["+k+"]")
		}
	}
	return out
}

// breakerCounts are Crossplane's own circuit-breaker counters for the
// InferenceService composites' controller.
type breakerCounts struct {
	opens, allowed, halfOpen, dropped float64
}

// readBreaker scrapes Crossplane's metrics; zero counts when it cannot.
func readBreaker(t *testing.T) breakerCounts {
	t.Helper()
	body, err := httpGet(env.core.MetricsURL)
	if err != nil {
		t.Logf("breaker counters: %v", err)
		return breakerCounts{}
	}
	return breakerOf(parseMetrics(body))
}

// breakerOf reads the XR circuit breaker's counters of the InferenceService
// controller from Crossplane's metrics.
func breakerOf(metrics []metric) breakerCounts {
	var b breakerCounts
	for _, m := range metrics {
		if !strings.Contains(m.labels["controller"], xrdName) {
			continue
		}
		switch {
		case strings.HasSuffix(m.name, "circuit_breaker_opens_total"):
			b.opens += m.value
		case strings.HasSuffix(m.name, "circuit_breaker_events_total"):
			switch m.labels["result"] {
			case "Allowed":
				b.allowed += m.value
			case "HalfOpenAllowed":
				b.halfOpen += m.value
			case "Dropped":
				b.dropped += m.value
			}
		}
	}
	return b
}

func (b breakerCounts) minus(a breakerCounts) breakerCounts {
	return breakerCounts{b.opens - a.opens, b.allowed - a.allowed, b.halfOpen - a.halfOpen, b.dropped - a.dropped}
}

func (b breakerCounts) String() string {
	return fmt.Sprintf("breaker opened %.0f×, events allowed %.0f, half-open %.0f, dropped %.0f", b.opens, b.allowed, b.halfOpen, b.dropped)
}

// breakerStep measures one step of a scenario for the breaker: call it
// before the change, and the func it returns once the step is done; it
// notes what fed the composite and what Crossplane's breaker did.
func breakerStep(ctx context.Context, t *testing.T, sc *scenario, ns, name, step string) func() {
	t.Helper()
	r := recordXREvents(ctx, t, ns, name)
	from, before := r.mark(), readBreaker(t)
	return func() {
		// Events of the last change may still be on their way.
		time.Sleep(500 * time.Millisecond)
		sc.note("%s, what reached the composite: %s; %s", step, r.since(from), readBreaker(t).minus(before))
	}
}
