package invariants

import (
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sunstructured "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// Each check is fed hand-built compositions, bad in one way each, and must
// report them (a check that cannot fail proves nothing), and a good one it
// must pass.

const ns = "team-a"

// handBuilt is a composition of typed objects under an Input and a claim
// spec; conditions are the function's condition lines.
func handBuilt(t *testing.T, in *v1beta1.Input, spec map[string]any, conditions []string, objs ...runtime.Object) *composition {
	t.Helper()
	if in == nil {
		in = &v1beta1.Input{}
	}
	im, err := runtime.DefaultUnstructuredConverter.ToUnstructured(in)
	if err != nil {
		t.Fatal(err)
	}
	c := &composition{Namespace: ns, Input: in, InputMap: im, Spec: spec, Existing: map[string]bool{}, Conditions: conditions}
	for i, o := range objs {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		c.Objects = append(c.Objects, object{Resource: string(rune('a' + i)), Kind: nestedString(u, "kind"), Name: nestedString(u, "metadata", "name"), U: u})
	}
	c.addExisting(spec, nil)
	return c
}

func meta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name, Namespace: ns} }

var (
	serverLabels = map[string]string{"app.kubernetes.io/instance": "llama", "app.kubernetes.io/component": "model-server"}
	pickerLabels = map[string]string{"app.kubernetes.io/instance": "llama", "app.kubernetes.io/component": "endpoint-picker"}
	pullerLabels = map[string]string{"app.kubernetes.io/instance": "llama", "app.kubernetes.io/component": "model-puller"}
)

// restrictedPod is a pod spec that meets the restricted profile, mounting
// a volume of a PVC.
func restrictedPod(pvc string, port int32) corev1.PodSpec {
	yes, no := true, false
	return corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &yes, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Containers: []corev1.Container{{
			Name: "main", Image: "img",
			Ports:           []corev1.ContainerPort{{Name: "http", ContainerPort: port}},
			SecurityContext: &corev1.SecurityContext{AllowPrivilegeEscalation: &no, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
		}},
		Volumes: []corev1.Volume{{Name: "weights", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: pvc}}}},
	}
}

func deployment(name string, labels map[string]string, spec corev1.PodSpec) *appsv1.Deployment {
	return &appsv1.Deployment{
		TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, ObjectMeta: meta(name),
		Spec: appsv1.DeploymentSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec}},
	}
}

func job(name string, spec corev1.PodSpec) *batchv1.Job {
	spec.RestartPolicy = corev1.RestartPolicyNever
	return &batchv1.Job{
		TypeMeta: metav1.TypeMeta{APIVersion: "batch/v1", Kind: "Job"}, ObjectMeta: meta(name),
		Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: pullerLabels}, Spec: spec}},
	}
}

func pvc(name string, class *string, size string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"}, ObjectMeta: meta(name),
		Spec: corev1.PersistentVolumeClaimSpec{StorageClassName: class, Resources: corev1.VolumeResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceStorage: *quantity(size)}}},
	}
}

func service(name string, selector map[string]string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"}, ObjectMeta: meta(name),
		Spec: corev1.ServiceSpec{Selector: selector, Ports: ports}}
}

func servicePort(name string, port int32, target intstr.IntOrString) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Port: port, TargetPort: target}
}

func serviceAccount(name string) *corev1.ServiceAccount {
	return &corev1.ServiceAccount{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"}, ObjectMeta: meta(name)}
}

// foreign is an object of a kind without Go types here.
func foreign(u map[string]any) runtime.Object {
	return &k8sunstructured.Unstructured{Object: u}
}

func fromNamespaces(namespaces ...string) []networkingv1.NetworkPolicyPeer {
	var out []networkingv1.NetworkPolicyPeer
	for _, n := range namespaces {
		out = append(out, networkingv1.NetworkPolicyPeer{NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": n}}})
	}
	return out
}

func policy(name string, selector map[string]string, rules ...networkingv1.NetworkPolicyIngressRule) *networkingv1.NetworkPolicy {
	return &networkingv1.NetworkPolicy{
		TypeMeta: metav1.TypeMeta{APIVersion: "networking.k8s.io/v1", Kind: "NetworkPolicy"}, ObjectMeta: meta(name),
		Spec: networkingv1.NetworkPolicySpec{PodSelector: metav1.LabelSelector{MatchLabels: selector},
			PolicyTypes: []networkingv1.PolicyType{networkingv1.PolicyTypeIngress}, Ingress: rules},
	}
}

// withEgress makes a policy one for egress too, with these rules after
// its own.
func withEgress(p *networkingv1.NetworkPolicy, rules ...networkingv1.NetworkPolicyEgressRule) *networkingv1.NetworkPolicy {
	if !slices.Contains(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
		p.Spec.PolicyTypes = append(p.Spec.PolicyTypes, networkingv1.PolicyTypeEgress)
	}
	p.Spec.Egress = append(p.Spec.Egress, rules...)
	return p
}

func onPorts(ports ...int32) []networkingv1.NetworkPolicyPort {
	var out []networkingv1.NetworkPolicyPort
	for _, p := range ports {
		v := intstr.FromInt32(p)
		out = append(out, networkingv1.NetworkPolicyPort{Port: &v})
	}
	return out
}

// checkCase is one composition and the rule a check must report on it, ""
// for none.
type checkCase struct {
	name string
	c    func(t *testing.T) *composition
	want string
}

func runCases(t *testing.T, run func(*composition) ([]violation, error), cases []checkCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := run(tc.c(t))
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(vs) > 0 {
					t.Errorf("reported %v on a good composition", vs)
				}
				return
			}
			for _, v := range vs {
				if strings.Contains(v.Rule, tc.want) {
					return
				}
			}
			t.Errorf("did not report %q; reported %v", tc.want, vs)
		})
	}
}

func TestReferencesResolve(t *testing.T) {
	server := func(mod func(*corev1.PodSpec)) *appsv1.Deployment {
		s := restrictedPod("llama-weights", 8000)
		if mod != nil {
			mod(&s)
		}
		return deployment("llama", serverLabels, s)
	}
	rb := &rbacv1.RoleBinding{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"}, ObjectMeta: meta("llama-epp"),
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Name: "llama-epp", Namespace: ns}},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "llama-epp"}}
	role := &rbacv1.Role{TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"}, ObjectMeta: meta("llama-epp")}
	runCases(t, referencesResolve, []checkCase{
		{"good", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, server(nil), pvc("llama-weights", nil, "1Gi"), serviceAccount("llama-epp"), role, rb)
		}, ""},
		{"volume of no PVC", func(t *testing.T) *composition { return handBuilt(t, nil, nil, nil, server(nil)) }, "unresolved PersistentVolumeClaim"},
		{"the claim's own pvc:// volume", func(t *testing.T) *composition {
			return handBuilt(t, nil, map[string]any{"model": map[string]any{"uri": "pvc://llama-weights/m"}}, nil, server(nil))
		}, ""},
		{"ServiceAccount not composed", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, server(func(s *corev1.PodSpec) { s.ServiceAccountName = "servers" }), pvc("llama-weights", nil, "1Gi"))
		}, "unresolved ServiceAccount"},
		{"ServiceAccount the Input names", func(t *testing.T) *composition {
			in := &v1beta1.Input{ServerServiceAccount: &v1beta1.ServiceAccountSettings{Name: "servers"}}
			return handBuilt(t, in, nil, nil, server(func(s *corev1.PodSpec) { s.ServiceAccountName = "servers" }), pvc("llama-weights", nil, "1Gi"))
		}, ""},
		{"Secret no one names", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, pvc("llama-weights", nil, "1Gi"), server(func(s *corev1.PodSpec) {
				s.Containers[0].EnvFrom = []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "platform-aws"}}}}
			}))
		}, "unresolved Secret"},
		{"ConfigMap volume not composed", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, pvc("llama-weights", nil, "1Gi"), server(func(s *corev1.PodSpec) {
				s.Volumes = append(s.Volumes, corev1.Volume{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "llama-epp"}}}})
			}))
		}, "unresolved ConfigMap"},
		{"claim of no ResourceClaimTemplate", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, pvc("llama-weights", nil, "1Gi"), server(func(s *corev1.PodSpec) {
				s.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: ptr.To("llama-gpu-0123abcd")}}
				s.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
			}))
		}, "unresolved ResourceClaimTemplate"},
		{"container claim the pod lacks", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, pvc("llama-weights", nil, "1Gi"), server(func(s *corev1.PodSpec) {
				s.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
			}))
		}, "unresolved PodResourceClaim"},
		{"RoleBinding to no ServiceAccount", func(t *testing.T) *composition { return handBuilt(t, nil, nil, nil, role, rb) }, "unresolved ServiceAccount"},
		{"RoleBinding to no Role", func(t *testing.T) *composition { return handBuilt(t, nil, nil, nil, serviceAccount("llama-epp"), rb) }, "unresolved Role"},
		{"route to no Service", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, foreign(map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": map[string]any{"name": "llama", "namespace": ns},
				"spec": map[string]any{"rules": []any{map[string]any{"backendRefs": []any{map[string]any{"name": "llama-2", "port": int64(80)}}}}}}))
		}, "unresolved Service"},
		{"pool with no picker Service", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, foreign(map[string]any{"apiVersion": "inference.networking.k8s.io/v1", "kind": "InferencePool", "metadata": map[string]any{"name": "llama", "namespace": ns},
				"spec": map[string]any{"endpointPickerRef": map[string]any{"name": "llama-epp"}}}))
		}, "unresolved Service"},
		{"autoscaler of no Deployment", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, foreign(map[string]any{"apiVersion": "http.keda.sh/v1alpha1", "kind": "HTTPScaledObject", "metadata": map[string]any{"name": "llama", "namespace": ns},
				"spec": map[string]any{"scaleTargetRef": map[string]any{"name": "llama", "service": "llama", "port": int64(80)}}}))
		}, "unresolved Deployment"},
	})
}

func TestJobsCanStart(t *testing.T) {
	withSA := func(sa string) *batchv1.Job {
		s := restrictedPod("llama-weights", 0)
		s.ServiceAccountName = sa
		return job("llama-pull-1", s)
	}
	runCases(t, jobsCanStart, []checkCase{
		{"default ServiceAccount", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, withSA(""), pvc("llama-weights", nil, "1Gi"))
		}, ""},
		{"composed ServiceAccount", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, withSA("llama-progress-1"), serviceAccount("llama-progress-1"), pvc("llama-weights", nil, "1Gi"))
		}, ""},
		{"ServiceAccount nothing composes", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, nil, withSA("llama-progress-1"), pvc("llama-weights", nil, "1Gi"))
		}, "unresolved ServiceAccount"},
		{"a condition says why", func(t *testing.T) *composition {
			return handBuilt(t, nil, nil, []string{"WeightsReady: PullPending: ServiceAccount llama-progress-1 is missing"}, withSA("llama-progress-1"), pvc("llama-weights", nil, "1Gi"))
		}, ""},
		{"volume of no PVC", func(t *testing.T) *composition { return handBuilt(t, nil, nil, nil, withSA("")) }, "unresolved PersistentVolumeClaim"},
		{"Secret the claim names", func(t *testing.T) *composition {
			j := withSA("")
			j.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: "HF_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "hf"}, Key: "t"}}}}
			return handBuilt(t, nil, map[string]any{"model": map[string]any{"credentialsSecretRef": map[string]any{"name": "hf"}}}, nil, j, pvc("llama-weights", nil, "1Gi"))
		}, ""},
	})
}

func TestFlowsAdmitted(t *testing.T) {
	np := func(mod func(*v1beta1.Input)) *v1beta1.Input {
		in := &v1beta1.Input{NetworkPolicy: &v1beta1.NetworkPolicySettings{Enabled: true, GatewayNamespace: "gateways", MetricsNamespace: "monitoring"}}
		if mod != nil {
			mod(in)
		}
		return in
	}
	server := deployment("llama", serverLabels, restrictedPod("llama-weights", 8000))
	svc := service("llama", serverLabels, servicePort("http", 80, intstr.FromString("http")))
	dns := networkingv1.NetworkPolicyEgressRule{To: fromNamespaces("kube-system"), Ports: onPorts(53, 53)}
	serverPolicy := func(namespaces ...string) *networkingv1.NetworkPolicy {
		return withEgress(policy("llama", serverLabels, networkingv1.NetworkPolicyIngressRule{From: fromNamespaces(namespaces...), Ports: onPorts(8000)}), dns)
	}
	// A LeaderWorkerSet of groups: the leader serves on 8000 and runs
	// the Ray head on 6379; the Service selects the leaders.
	leader := restrictedPod("llama-weights", 8000)
	leader.Containers[0].Ports = append(leader.Containers[0].Ports, corev1.ContainerPort{Name: "ray", ContainerPort: 6379})
	worker := restrictedPod("llama-weights", 0)
	worker.Containers[0].Ports = nil
	template := func(spec corev1.PodSpec) map[string]any {
		u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: serverLabels}, Spec: spec})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	groups := foreign(map[string]any{"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": map[string]any{"name": "llama", "namespace": ns},
		"spec": map[string]any{"leaderWorkerTemplate": map[string]any{"leaderTemplate": template(leader), "workerTemplate": template(worker), "size": int64(2)}}})
	leaders := service("llama", map[string]string{"app.kubernetes.io/instance": "llama", "app.kubernetes.io/component": "model-server", lwsWorkerIndexLabel: "0"}, servicePort("http", 80, intstr.FromString("http")))
	group0 := map[string]string{lwsSetNameLabel: "llama", lwsGroupIndexLabel: "0"}
	groupPeer := []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: group0}}}
	groupIn := policy("llama.group-0", group0, networkingv1.NetworkPolicyIngressRule{From: groupPeer})
	groupPolicy := withEgress(groupIn.DeepCopy(), networkingv1.NetworkPolicyEgressRule{To: groupPeer})
	picker := deployment("llama-epp", pickerLabels, restrictedPod("", 9002))
	picker.Spec.Template.Spec.Volumes = nil
	pickerSvc := service("llama-epp", pickerLabels, servicePort("grpc-ext-proc", 9002, intstr.FromInt32(9002)), servicePort("http-metrics", 9090, intstr.FromInt32(9090)))
	pool := foreign(map[string]any{"apiVersion": "inference.networking.k8s.io/v1", "kind": "InferencePool", "metadata": map[string]any{"name": "llama", "namespace": ns},
		"spec": map[string]any{"endpointPickerRef": map[string]any{"name": "llama-epp"}}})
	pickerPolicy := policy("llama-epp", pickerLabels,
		networkingv1.NetworkPolicyIngressRule{From: fromNamespaces("gateways"), Ports: onPorts(9002)},
		networkingv1.NetworkPolicyIngressRule{From: fromNamespaces("monitoring"), Ports: onPorts(9090)})
	podMonitor := foreign(map[string]any{"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor", "metadata": map[string]any{"name": "llama", "namespace": ns},
		"spec": map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app.kubernetes.io/instance": "llama"}}, "podMetricsEndpoints": []any{map[string]any{"portNumber": int64(8000)}}}})
	httpScaled := foreign(map[string]any{"apiVersion": "http.keda.sh/v1alpha1", "kind": "HTTPScaledObject", "metadata": map[string]any{"name": "llama", "namespace": ns},
		"spec": map[string]any{"scaleTargetRef": map[string]any{"name": "llama", "service": "llama", "port": int64(80)}}})
	pullJob := job("llama-pull-1", restrictedPod("llama-weights", 0))
	pullPolicy := policy("llama.pull", pullerLabels)
	hpa := func(metric map[string]any) runtime.Object {
		return foreign(map[string]any{"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": map[string]any{"name": "llama", "namespace": ns},
			"spec": map[string]any{"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "llama"}, "maxReplicas": int64(3), "metrics": []any{metric}}})
	}
	concurrencyHPA := hpa(map[string]any{"type": "Pods", "pods": map[string]any{"metric": map[string]any{"name": "vllm_num_requests_running"}, "target": map[string]any{"type": "AverageValue", "averageValue": "8"}}})
	cpuHPA := hpa(map[string]any{"type": "Resource", "resource": map[string]any{"name": "cpu", "target": map[string]any{"type": "Utilization", "averageUtilization": int64(80)}}})
	runCases(t, flowsAdmitted, []checkCase{
		{"NetworkPolicy off", func(t *testing.T) *composition { return handBuilt(t, nil, nil, nil, server, svc) }, ""},
		{"good", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways", "monitoring"), pullJob, pullPolicy, podMonitor)
		}, ""},
		{"server selected by no policy", func(t *testing.T) *composition { return handBuilt(t, np(nil), nil, nil, server, svc) }, "pod selected by no NetworkPolicy"},
		{"pull pods selected by no policy", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways", "monitoring"), pullJob)
		}, "pod selected by no NetworkPolicy"},
		{"gateway not admitted", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "monitoring"))
		}, "flow not admitted: gateway → servers"},
		{"serving port not admitted", func(t *testing.T) *composition {
			p := serverPolicy(ns, "gateways", "monitoring")
			p.Spec.Ingress[0].Ports = onPorts(9999)
			return handBuilt(t, np(nil), nil, nil, server, svc, p)
		}, "flow not admitted: claim namespace → servers"},
		{"scraped without a metrics namespace", func(t *testing.T) *composition {
			return handBuilt(t, np(func(in *v1beta1.Input) { in.NetworkPolicy.MetricsNamespace = "" }), nil, nil, server, svc, serverPolicy(ns, "gateways"), podMonitor)
		}, "flow not admitted: Prometheus → servers"},
		{"concurrency autoscaler without a metrics namespace", func(t *testing.T) *composition {
			return handBuilt(t, np(func(in *v1beta1.Input) { in.NetworkPolicy.MetricsNamespace = "" }), nil, nil, server, svc, serverPolicy(ns, "gateways"), concurrencyHPA)
		}, "flow not admitted: Prometheus → servers"},
		{"CPU autoscaler without a metrics namespace", func(t *testing.T) *composition {
			return handBuilt(t, np(func(in *v1beta1.Input) { in.NetworkPolicy.MetricsNamespace = "" }), nil, nil, server, svc, serverPolicy(ns, "gateways"), cpuHPA)
		}, ""},
		{"metrics namespace not admitted", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways"), podMonitor)
		}, "flow not admitted: Prometheus → servers"},
		{"interceptor not admitted", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways", "monitoring"), httpScaled)
		}, "flow not admitted: KEDA HTTP interceptor → servers"},
		{"interceptor admitted", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways", "monitoring", "keda"), httpScaled)
		}, ""},
		{"KEDA admitted without the add-on", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways", "monitoring", "keda"))
		}, "admits a source no feature needs"},
		{"every source admitted", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, policy("llama", serverLabels, networkingv1.NetworkPolicyIngressRule{}))
		}, "admits a source no feature needs"},
		{"pull pods admit a namespace", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways", "monitoring"), pullJob,
				policy("llama.pull", pullerLabels, networkingv1.NetworkPolicyIngressRule{From: fromNamespaces(ns)}))
		}, "admits a source no feature needs"},
		{"picker selected by no policy", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways", "monitoring"), picker, pickerSvc, pool)
		}, "pod selected by no NetworkPolicy"},
		{"picker with its policy", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways", "monitoring"), picker, pickerSvc, pool, pickerPolicy)
		}, ""},
		{"gateway cannot reach the picker", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, serverPolicy(ns, "gateways", "monitoring"), picker, pickerSvc, pool,
				policy("llama-epp", pickerLabels, networkingv1.NetworkPolicyIngressRule{From: fromNamespaces("monitoring"), Ports: onPorts(9090)}))
		}, "flow not admitted: gateway → picker"},
		{"picker cannot reach the servers", func(t *testing.T) *composition {
			p := serverPolicy(ns, "gateways", "monitoring")
			p.Spec.Ingress[0].From[0].PodSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "client"}}
			return handBuilt(t, np(nil), nil, nil, server, svc, p, picker, pickerSvc, pool, pickerPolicy)
		}, "flow not admitted: picker → servers"},
		{"rule names no ports", func(t *testing.T) *composition {
			p := serverPolicy(ns, "gateways", "monitoring")
			p.Spec.Ingress[0].Ports = nil
			return handBuilt(t, np(nil), nil, nil, server, svc, p)
		}, "rule names no ports"},
		{"group isolated", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, groups, leaders, serverPolicy(ns, "gateways", "monitoring"), groupPolicy)
		}, ""},
		{"group cannot reach itself out", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, groups, leaders, serverPolicy(ns, "gateways", "monitoring"), groupIn)
		}, "flow not admitted: group ↔ group"},
		{"server egress open", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, policy("llama", serverLabels, networkingv1.NetworkPolicyIngressRule{From: fromNamespaces(ns, "gateways", "monitoring"), Ports: onPorts(8000)}))
		}, "server egress open"},
		{"server egress to every destination", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, withEgress(serverPolicy(ns, "gateways", "monitoring"), networkingv1.NetworkPolicyEgressRule{}))
		}, "server egress open"},
		{"server egress to a namespace not listed", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, withEgress(serverPolicy(ns, "gateways", "monitoring"), networkingv1.NetworkPolicyEgressRule{To: fromNamespaces("tracing"), Ports: onPorts(4317)}))
		}, "server egress beyond DNS, the group and input.networkPolicy.egress"},
		{"server egress to the DNS namespace on every port", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, server, svc, withEgress(serverPolicy(ns, "gateways", "monitoring"), networkingv1.NetworkPolicyEgressRule{To: fromNamespaces("kube-system")}))
		}, "server egress beyond DNS, the group and input.networkPolicy.egress"},
		{"server egress to what the Input lists", func(t *testing.T) *composition {
			in := np(func(in *v1beta1.Input) {
				in.NetworkPolicy.Egress = []v1beta1.EgressRule{{Namespace: "tracing", Ports: []v1beta1.EgressPort{{Port: 4317}}}, {CIDR: "10.0.0.0/8", Except: []string{"10.96.0.0/12"}}}
			})
			return handBuilt(t, in, nil, nil, server, svc, withEgress(serverPolicy(ns, "gateways", "monitoring"),
				networkingv1.NetworkPolicyEgressRule{To: fromNamespaces("tracing"), Ports: onPorts(4317)},
				networkingv1.NetworkPolicyEgressRule{To: []networkingv1.NetworkPolicyPeer{{IPBlock: &networkingv1.IPBlock{CIDR: "10.0.0.0/8", Except: []string{"10.96.0.0/12"}}}}}))
		}, ""},
		{"group cannot reach itself", func(t *testing.T) *composition {
			return handBuilt(t, np(nil), nil, nil, groups, leaders, serverPolicy(ns, "gateways", "monitoring"))
		}, "flow not admitted: group ↔ group"},
		{"Ray port open to the claim's namespace", func(t *testing.T) *composition {
			p := serverPolicy(ns, "gateways", "monitoring")
			p.Spec.Ingress[0].Ports = onPorts(8000, 6379)
			return handBuilt(t, np(nil), nil, nil, groups, leaders, p, groupPolicy)
		}, "group port reachable from outside the group: namespace → group"},
		{"Ray port open to every group", func(t *testing.T) *composition {
			all := withEgress(policy("llama.group-0", group0, networkingv1.NetworkPolicyIngressRule{From: []networkingv1.NetworkPolicyPeer{{PodSelector: &metav1.LabelSelector{MatchLabels: map[string]string{lwsSetNameLabel: "llama"}}}}}),
				networkingv1.NetworkPolicyEgressRule{To: groupPeer})
			return handBuilt(t, np(nil), nil, nil, groups, leaders, serverPolicy(ns, "gateways", "monitoring"), all)
		}, "group port reachable from outside the group: another group → group"},
	})
}

func TestPodsRestricted(t *testing.T) {
	with := func(mod func(*corev1.PodSpec)) func(t *testing.T) *composition {
		return func(t *testing.T) *composition {
			s := restrictedPod("llama-weights", 8000)
			mod(&s)
			return handBuilt(t, nil, nil, nil, deployment("llama", serverLabels, s))
		}
	}
	yes := true
	runCases(t, podsRestricted, []checkCase{
		{"good", with(func(*corev1.PodSpec) {}), ""},
		{"privileged", with(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Privileged = &yes }), "privileged"},
		{"escalation allowed", with(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.AllowPrivilegeEscalation = nil }), "allowPrivilegeEscalation"},
		{"capabilities kept", with(func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.Capabilities = nil }), "capabilities"},
		{"capability added", with(func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"SYS_ADMIN"}
		}), "capabilities"},
		{"may run as root", with(func(s *corev1.PodSpec) { s.SecurityContext.RunAsNonRoot = nil }), "runAsNonRoot"},
		{"runs as UID 0", with(func(s *corev1.PodSpec) { root := int64(0); s.SecurityContext.RunAsUser = &root }), "runAsUser"},
		{"no seccomp profile", with(func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil }), "seccomp"},
		{"unconfined seccomp", with(func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}), "seccomp"},
		{"host network", with(func(s *corev1.PodSpec) { s.HostNetwork = true }), "host namespaces"},
		{"host port", with(func(s *corev1.PodSpec) { s.Containers[0].Ports[0].HostPort = 8000 }), "host ports"},
		{"hostPath volume", with(func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}})
		}), "volume type"},
		{"init container", with(func(s *corev1.PodSpec) { s.InitContainers = []corev1.Container{{Name: "init", Image: "img"}} }), "allowPrivilegeEscalation"},
	})
}

func TestSourcesAllowed(t *testing.T) {
	policyOf := func(p v1beta1.Policy) *v1beta1.Input { return &v1beta1.Input{Policy: &p} }
	pull := func(uri string) *batchv1.Job {
		s := restrictedPod("llama-weights", 0)
		s.Containers[0].Env = []corev1.EnvVar{{Name: "MODEL_URI", Value: uri}}
		return job("llama-pull-1", s)
	}
	imageServer := func(ref string) *appsv1.Deployment {
		s := restrictedPod("llama-weights", 8000)
		s.Volumes = []corev1.Volume{{Name: "weights", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: ref}}}}
		return deployment("llama", serverLabels, s)
	}
	fast := "fast-rwx"
	no := false
	runCases(t, sourcesAllowed, []checkCase{
		{"no policy", func(t *testing.T) *composition { return handBuilt(t, nil, nil, nil, pull("gs://anything/x")) }, ""},
		{"allowed", func(t *testing.T) *composition {
			in := policyOf(v1beta1.Policy{AllowedURISchemes: []string{"hf", "https"}, AllowedURIHosts: []string{"hf://meta-llama", "https://*.models.internal"}})
			return handBuilt(t, in, nil, nil, pull("hf://meta-llama/Llama-3.1-8B"), pull("https://a.models.internal/m.gguf"))
		}, ""},
		{"scheme refused", func(t *testing.T) *composition {
			return handBuilt(t, policyOf(v1beta1.Policy{AllowedURISchemes: []string{"hf"}}), nil, nil, pull("s3://bucket/m"))
		}, "allowedURISchemes"},
		{"host refused", func(t *testing.T) *composition {
			return handBuilt(t, policyOf(v1beta1.Policy{AllowedURIHosts: []string{"hf://meta-llama"}}), nil, nil, pull("hf://acme/support-lora"))
		}, "allowedURIHosts"},
		{"wildcard is not the domain itself", func(t *testing.T) *composition {
			return handBuilt(t, policyOf(v1beta1.Policy{AllowedURIHosts: []string{"https://*.models.internal"}}), nil, nil, pull("https://models.internal/m"))
		}, "allowedURIHosts"},
		{"image volume from another registry", func(t *testing.T) *composition {
			return handBuilt(t, policyOf(v1beta1.Policy{AllowedURIHosts: []string{"oci://registry.example.com"}}), nil, nil, imageServer("evil.example.com/m:1"))
		}, "allowedURIHosts"},
		{"the claim's volume where pvc:// is off", func(t *testing.T) *composition {
			return handBuilt(t, policyOf(v1beta1.Policy{AllowPVCURIs: &no}), map[string]any{"model": map[string]any{"uri": "pvc://llama-weights/m"}}, nil,
				deployment("llama", serverLabels, restrictedPod("llama-weights", 8000)))
		}, "allowPVCURIs"},
		{"storage class refused", func(t *testing.T) *composition {
			return handBuilt(t, policyOf(v1beta1.Policy{AllowedStorageClasses: []string{fast}}), nil, nil, pvc("llama-weights", nil, "1Gi"))
		}, "allowedStorageClasses"},
		{"storage class allowed", func(t *testing.T) *composition {
			return handBuilt(t, policyOf(v1beta1.Policy{AllowedStorageClasses: []string{fast}}), nil, nil, pvc("llama-weights", &fast, "1Gi"))
		}, ""},
		{"volume too large", func(t *testing.T) *composition {
			return handBuilt(t, policyOf(v1beta1.Policy{MaxStorageSize: quantity("100Gi")}), nil, nil, pvc("llama-weights", &fast, "1Ti"))
		}, "maxStorageSize"},
	})
}

func TestRoutesOwnHost(t *testing.T) {
	route := func(name string, hosts ...any) func(t *testing.T) *composition {
		return func(t *testing.T) *composition {
			spec := map[string]any{"parentRefs": []any{map[string]any{"name": "inference", "namespace": "gateways"}}}
			if hosts != nil {
				spec["hostnames"] = hosts
			}
			return handBuilt(t, nil, nil, nil, foreign(map[string]any{"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute", "metadata": map[string]any{"name": name, "namespace": ns}, "spec": spec}))
		}
	}
	runCases(t, routesOwnHost, []checkCase{
		{"own hostname", route("llama", "llama."+ns+".models.example.com"), ""},
		{"no hostnames", route("llama"), "route matches every host"},
		{"another claim's hostname", route("llama", "chat."+ns+".models.example.com"), "route hostname not its own"},
		{"a wildcard", route("llama", "*.models.example.com"), "route hostname not its own"},
		{"no domain", route("llama", "llama."+ns+"."), "route hostname not its own"},
	})
}
