package fn

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/render"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestNetworkPolicies: with input.networkPolicy on, the servers of every
// version accept traffic only from their own namespace, the Gateway's and
// the metrics namespace, and the pull pods from nowhere; each policy
// selects exactly its pods. Off, there are none.
func TestNetworkPolicies(t *testing.T) {
	gateway := map[string]any{"name": "inference", "namespace": "gateways"}
	type policies struct {
		Names      map[string]string // composition resource → object name
		ServerFrom []string          // namespaces the servers accept traffic from
	}
	cases := map[string]struct {
		xr   func(t testing.TB) map[string]any
		in   map[string]any
		want policies
	}{
		"Off": {xr: func(testing.TB) map[string]any { return testXR() }, want: policies{Names: map[string]string{}}},
		"OwnNamespaceOnly": {
			xr:   func(testing.TB) map[string]any { return testXR() },
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama", render.ResourceNetworkPolicyPull: "llama.pull"}, ServerFrom: []string{"team-a"}},
		},
		"GatewayFromTraffic": {
			xr:   canaryXR,
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true, "metricsNamespace": "monitoring"}, "traffic": map[string]any{"gateway": gateway}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama", render.ResourceNetworkPolicyPull: "llama.pull"}, ServerFrom: []string{"team-a", "gateways", "monitoring"}},
		},
		"GatewayDataPlaneNamespace": {
			xr:   func(testing.TB) map[string]any { return testXR() },
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true, "gatewayNamespace": "envoy-gateway-system", "metricsNamespace": "team-a"}, "traffic": map[string]any{"gateway": gateway}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama", render.ResourceNetworkPolicyPull: "llama.pull"}, ServerFrom: []string{"team-a", "envoy-gateway-system"}},
		},
		"UserVolumeNoPulls": {
			xr: func(testing.TB) map[string]any {
				xr := testXR()
				setPath(xr, "pvc://shared/llama", "spec", "model", "uri")
				return xr
			},
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama"}, ServerFrom: []string{"team-a"}},
		},
		"ModelCache": {
			xr:   func(t testing.TB) map[string]any { return readYAML(t, cacheXRPath) },
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicyPull: "llama-3-1-8b.cache-pull"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp, _ := settle(t, tc.xr(t), tc.in, world{}, nil)
			got := policies{Names: map[string]string{}}
			for _, rn := range []string{render.ResourceNetworkPolicy, render.ResourceNetworkPolicyPull} {
				if _, ok := rsp.GetDesired().GetResources()[rn]; !ok {
					continue
				}
				np := desiredObject[networkingv1.NetworkPolicy](t, rsp, rn)
				got.Names[rn] = np.Name
				if readiness(rsp, rn) != readyTrue {
					t.Errorf("%s is not ready once observed", rn)
				}
				if rn == render.ResourceNetworkPolicy {
					for _, p := range np.Spec.Ingress[0].From {
						got.ServerFrom = append(got.ServerFrom, p.NamespaceSelector.MatchLabels[render.LabelNamespaceName])
					}
				} else if len(np.Spec.Ingress) != 0 || len(np.Spec.PolicyTypes) != 1 || np.Spec.PolicyTypes[0] != networkingv1.PolicyTypeIngress {
					t.Errorf("the pull pods' policy allows ingress: %+v", np.Spec)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("NetworkPolicies (-want +got):\n%s", diff)
			}
		})
	}
}

// TestNetworkPolicySelectors: the servers' policy selects the pods of
// every version's Deployment and no pull pod; the pull policy selects the
// pull pods and no server.
func TestNetworkPolicySelectors(t *testing.T) {
	rsp, _ := settle(t, canaryXR(t), map[string]any{"networkPolicy": map[string]any{"enabled": true}}, world{}, nil)
	selector := func(rn string) labels.Selector {
		np := desiredObject[networkingv1.NetworkPolicy](t, rsp, rn)
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil {
			t.Fatal(err)
		}
		return sel
	}
	servers, pulls := selector(render.ResourceNetworkPolicy), selector(render.ResourceNetworkPolicyPull)
	type selected struct{ Servers, Pulls bool }
	want, got := map[string]selected{}, map[string]selected{}
	for _, rn := range desiredNames(rsp) {
		var pod labels.Set
		switch {
		case strings.HasPrefix(rn, render.ResourceDeployment):
			pod = desiredObject[appsv1.Deployment](t, rsp, rn).Spec.Template.Labels
			want[rn] = selected{Servers: true}
		case strings.HasPrefix(rn, render.ResourceJobPrefix):
			pod = desiredObject[batchv1.Job](t, rsp, rn).Spec.Template.Labels
			want[rn] = selected{Pulls: true}
		default:
			continue
		}
		got[rn] = selected{Servers: servers.Matches(pod), Pulls: pulls.Matches(pod)}
	}
	if len(want) < 4 {
		t.Fatalf("want two Deployments and two Jobs, have %v", desiredNames(rsp))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pods each policy selects (-want +got):\n%s", diff)
	}
}
