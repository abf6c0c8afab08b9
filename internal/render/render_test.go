package render

import (
	"os"
	"path/filepath"
	"sort"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"
)

// TestKindsJudgeEveryComposedKind: every kind of every golden render
// (every example at every stage, fn/testdata/golden) is in Kinds, so
// Judged never leaves an object not ready for want of a rule; and every
// kind in Kinds is rendered by some golden, so the table holds no kind the
// function no longer composes.
func TestKindsJudgeEveryComposedKind(t *testing.T) {
	goldens, err := filepath.Glob("../../fn/testdata/golden/*.yaml")
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no goldens: %v", err)
	}
	rendered := map[schema.GroupVersionKind]string{}
	for _, g := range goldens {
		b, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		var golden struct {
			Desired struct {
				Resources map[string]struct {
					Resource struct {
						APIVersion string `json:"apiVersion"`
						Kind       string `json:"kind"`
					} `json:"resource"`
				} `json:"resources"`
			} `json:"desired"`
		}
		if err := yaml.Unmarshal(b, &golden); err != nil {
			t.Fatalf("%s: %v", g, err)
		}
		for name, r := range golden.Desired.Resources {
			gvk := schema.FromAPIVersionAndKind(r.Resource.APIVersion, r.Resource.Kind)
			if _, ok := Kinds[gvk]; !ok {
				t.Errorf("%s renders %s (%s), which has no entry in render.Kinds", filepath.Base(g), name, gvk)
			}
			rendered[gvk] = g
		}
	}
	var stale []string
	for gvk := range Kinds {
		if _, ok := rendered[gvk]; !ok {
			stale = append(stale, gvk.String())
		}
	}
	sort.Strings(stale)
	if len(stale) > 0 {
		t.Errorf("render.Kinds has kinds no golden renders: %v", stale)
	}
}

// TestJudged: the kind's rule decides, on what is observed; nothing
// observed is never ready, and neither is a kind without a rule.
func TestJudged(t *testing.T) {
	svc := func() *corev1.Service {
		return &corev1.Service{TypeMeta: metaOf(corev1.SchemeGroupVersion.WithKind("Service"))}
	}
	lb := svc()
	lb.Spec.Type = corev1.ServiceTypeLoadBalancer
	cm := &corev1.ConfigMap{TypeMeta: metaOf(corev1.SchemeGroupVersion.WithKind("ConfigMap"))}
	unknown := &corev1.Pod{TypeMeta: metaOf(corev1.SchemeGroupVersion.WithKind("Pod"))}
	cases := map[string]struct {
		desired, observed runtime.Object
		want              bool
	}{
		"ServiceObserved":           {svc(), svc(), true},
		"ServiceNotObserved":        {svc(), nil, false},
		"ServiceTypedNil":           {svc(), (*corev1.Service)(nil), false},
		"LoadBalancerNoIngress":     {svc(), lb, false},
		"ServiceSeenNotDecoded":     {svc(), Seen, false},
		"ConfigMapSeen":             {cm, Seen, true},
		"ConfigMapNotObserved":      {cm, nil, false},
		"KindWithoutRuleNeverReady": {unknown, unknown, false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Judged("r", tc.desired, tc.observed); got.Ready != tc.want || got.Name != "r" || got.Object != tc.desired {
				t.Errorf("Judged(...) = %+v, want ready %v", got, tc.want)
			}
		})
	}
}

func metaOf(gvk schema.GroupVersionKind) metav1.TypeMeta {
	v, k := gvk.ToAPIVersionAndKind()
	return metav1.TypeMeta{APIVersion: v, Kind: k}
}
