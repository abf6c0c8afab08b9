package render

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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
