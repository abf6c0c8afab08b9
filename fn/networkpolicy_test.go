package fn

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/kinds/lws"
	"github.com/inferno-ai/function-inferno/internal/render"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// TestNetworkPolicies: with input.networkPolicy on, the servers of every
// version accept traffic only from their own namespace and the Gateway's
// on the serving port and from the metrics namespace on the metrics port
// (every rule names its port), and the pull pods from nowhere; the servers
// reach out to DNS and to input.networkPolicy.egress alone; each policy
// selects exactly its pods. Off, there are none.
func TestNetworkPolicies(t *testing.T) {
	gateway := map[string]any{"name": "inference", "namespace": "gateways", "domain": "models.example.com"}
	type policies struct {
		Names map[string]string // composition resource → object name
		// ServerRules are the servers' ingress rules, each "namespaces →
		// ports"; ServerEgress their egress rules, each "destinations →
		// protocol/ports" (a destination "ns:<name>" or a range "cidr
		// except …"), empty for every port.
		ServerRules, ServerEgress []string
	}
	dns := "ns:kube-system → UDP/53,TCP/53"
	cases := map[string]struct {
		xr   func(t testing.TB) map[string]any
		in   map[string]any
		want policies
	}{
		"Off": {xr: func(testing.TB) map[string]any { return testXR() }, want: policies{Names: map[string]string{}}},
		"OwnNamespaceOnly": {
			xr:   func(testing.TB) map[string]any { return testXR() },
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama", render.ResourceNetworkPolicyPull: "llama.pull"}, ServerRules: []string{"team-a → 8000"}, ServerEgress: []string{dns}},
		},
		"GatewayFromTraffic": {
			xr:   canaryXR,
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true, "metricsNamespace": "monitoring"}, "traffic": map[string]any{"gateway": gateway}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama", render.ResourceNetworkPolicyPull: "llama.pull"}, ServerRules: []string{"team-a,gateways → 8000", "monitoring → 8000"}, ServerEgress: []string{dns}},
		},
		"GatewayDataPlaneNamespace": {
			xr:   func(testing.TB) map[string]any { return testXR() },
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true, "gatewayNamespace": "envoy-gateway-system", "metricsNamespace": "team-a"}, "traffic": map[string]any{"gateway": gateway}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama", render.ResourceNetworkPolicyPull: "llama.pull"}, ServerRules: []string{"team-a,envoy-gateway-system → 8000", "team-a → 8000"}, ServerEgress: []string{dns}},
		},
		"MetricsPortOfItsOwn": {
			xr: func(testing.TB) map[string]any {
				xr := testXR()
				setPath(xr, "triton", "spec", "model", "framework")
				return xr
			},
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true, "metricsNamespace": "monitoring"}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama", render.ResourceNetworkPolicyPull: "llama.pull"}, ServerRules: []string{"team-a → 8000", "monitoring → 8002"}, ServerEgress: []string{dns}},
		},
		"NoMetricsNoMetricsRule": {
			xr: func(testing.TB) map[string]any {
				xr := testXR()
				setPath(xr, "ollama", "spec", "model", "framework")
				return xr
			},
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true, "metricsNamespace": "monitoring"}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama", render.ResourceNetworkPolicyPull: "llama.pull"}, ServerRules: []string{"team-a → 11434"}, ServerEgress: []string{dns}},
		},
		"UserVolumeNoPulls": {
			xr: func(testing.TB) map[string]any {
				xr := testXR()
				setPath(xr, "pvc://shared/llama", "spec", "model", "uri")
				return xr
			},
			in:   map[string]any{"networkPolicy": map[string]any{"enabled": true}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama"}, ServerRules: []string{"team-a → 8000"}, ServerEgress: []string{dns}},
		},
		"Egress": {
			xr: func(testing.TB) map[string]any { return testXR() },
			in: map[string]any{"networkPolicy": map[string]any{"enabled": true, "dnsNamespace": "dns", "egress": []any{
				map[string]any{"cidr": "10.0.0.0/8", "except": []any{"10.96.0.0/12"}, "ports": []any{map[string]any{"port": 443}, map[string]any{"port": 8125, "protocol": "UDP"}}},
				map[string]any{"namespace": "tracing", "ports": []any{map[string]any{"port": 4317}}},
				map[string]any{"cidr": "fd00::/8"},
			}}},
			want: policies{Names: map[string]string{render.ResourceNetworkPolicy: "llama", render.ResourceNetworkPolicyPull: "llama.pull"}, ServerRules: []string{"team-a → 8000"}, ServerEgress: []string{
				"ns:dns → UDP/53,TCP/53", "10.0.0.0/8 except [10.96.0.0/12] → TCP/443,UDP/8125", "ns:tracing → TCP/4317", "fd00::/8 except [] → ",
			}},
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
					for _, r := range np.Spec.Ingress {
						var from, ports []string
						for _, p := range r.From {
							from = append(from, p.NamespaceSelector.MatchLabels[render.LabelNamespaceName])
						}
						for _, p := range r.Ports {
							ports = append(ports, p.Port.String())
						}
						got.ServerRules = append(got.ServerRules, strings.Join(from, ",")+" → "+strings.Join(ports, ","))
					}
					if !slices.Equal(np.Spec.PolicyTypes, []networkingv1.PolicyType{networkingv1.PolicyTypeIngress, networkingv1.PolicyTypeEgress}) {
						t.Errorf("the servers' policy types are %v, want Ingress and Egress", np.Spec.PolicyTypes)
					}
					for _, r := range np.Spec.Egress {
						var to, ports []string
						for _, p := range r.To {
							if p.IPBlock != nil {
								to = append(to, fmt.Sprintf("%s except %v", p.IPBlock.CIDR, p.IPBlock.Except))
							} else {
								to = append(to, "ns:"+p.NamespaceSelector.MatchLabels[render.LabelNamespaceName])
							}
						}
						for _, p := range r.Ports {
							ports = append(ports, string(*p.Protocol)+"/"+p.Port.String())
						}
						got.ServerEgress = append(got.ServerEgress, strings.Join(to, ",")+" → "+strings.Join(ports, ","))
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

// TestGroupPolicies: with spec.nodes > 1, each group the LeaderWorkerSet
// may run (its groups and the rollout's surge groups) gets a policy that
// selects the group's pods by the LWS labels, admits the group's pods
// alone and lets them reach the group's pods alone (on every port: the
// servers' policy closes the rest of their egress); the servers' policy
// admits namespaces on the serving and metrics ports only, so the
// leader's Ray port is reachable from its group alone.
func TestGroupPolicies(t *testing.T) {
	in := multiNodeInput(t)
	xr := readYAML(t, multiNodeXR)
	rsp := run(t, newRequest(t, xr, in, readObserved(t, multiNodeObserved+"/serving.yaml")...))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	set := desiredObject[lws.LeaderWorkerSet](t, rsp, render.ResourceLeaderWorkerSet)
	ray := set.Spec.LeaderWorkerTemplate.LeaderTemplate.Spec.Containers[0].Ports
	// 2 groups and input.rollout's default maxSurge of 1.
	var got []string
	for i := range int32(4) {
		rn := render.GroupPolicyResource(i)
		if _, ok := rsp.GetDesired().GetResources()[rn]; !ok {
			continue
		}
		np := desiredObject[networkingv1.NetworkPolicy](t, rsp, rn)
		group := labels.Set{lws.SetNameLabel: set.Name, lws.GroupIndexLabel: strconv.Itoa(int(i))}
		other := labels.Set{lws.SetNameLabel: set.Name, lws.GroupIndexLabel: strconv.Itoa(int(i) + 1)}
		sel, _ := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if !sel.Matches(group) || sel.Matches(other) {
			t.Errorf("%s selects %s: not exactly group %d", rn, sel, i)
		}
		if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 1 {
			t.Fatalf("%s: ingress %+v, want one rule of one peer", rn, np.Spec.Ingress)
		}
		peer := np.Spec.Ingress[0].From[0]
		from, _ := metav1.LabelSelectorAsSelector(peer.PodSelector)
		if peer.NamespaceSelector != nil || peer.IPBlock != nil || !from.Matches(group) || from.Matches(other) {
			t.Errorf("%s admits %+v: not group %d alone", rn, peer, i)
		}
		if len(np.Spec.Egress) != 1 || len(np.Spec.Egress[0].To) != 1 || len(np.Spec.Egress[0].Ports) != 0 {
			t.Fatalf("%s: egress %+v, want one rule of one peer on every port", rn, np.Spec.Egress)
		}
		if to, _ := metav1.LabelSelectorAsSelector(np.Spec.Egress[0].To[0].PodSelector); np.Spec.Egress[0].To[0].NamespaceSelector != nil || !to.Matches(group) || to.Matches(other) {
			t.Errorf("%s lets the group reach %+v: not group %d alone", rn, np.Spec.Egress[0].To[0], i)
		}
		got = append(got, np.Name)
	}
	if want := []string{"llama-405b.group-0", "llama-405b.group-1", "llama-405b.group-2"}; !cmp.Equal(want, got) {
		t.Errorf("group policies %v, want %v", got, want)
	}
	server := desiredObject[networkingv1.NetworkPolicy](t, rsp, render.ResourceNetworkPolicy)
	for _, r := range server.Spec.Ingress {
		for _, p := range r.From {
			if p.NamespaceSelector == nil {
				t.Errorf("server rule %+v admits pods, not namespaces", r)
			}
		}
		if len(r.Ports) != 1 || r.Ports[0].Port.IntValue() != 8000 {
			t.Errorf("server rule admits ports %+v, want the serving port 8000 alone", r.Ports)
		}
	}
	for _, p := range ray {
		if p.Name == "ray" && p.ContainerPort == 8000 {
			t.Errorf("the Ray port is the serving port")
		}
	}
}
