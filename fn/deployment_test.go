package fn

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
)

// TestNoReplicasWithAutoscaling: with an HPA, the Deployment leaves
// spec.replicas out, or Crossplane and the HPA would fight; without one it
// runs replicas.min servers (DESIGN §4).
func TestNoReplicasWithAutoscaling(t *testing.T) {
	cases := map[string]struct {
		replicas, autoscaling map[string]any
		want                  any // spec.replicas as the response holds it; nil for absent
	}{
		"Defaults":            {want: float64(1)},
		"MinThree":            {replicas: map[string]any{"min": 3}, want: float64(3)},
		"ScaledToZero":        {replicas: map[string]any{"min": 0}, want: float64(0)},
		"MaxIgnoredNoHPA":     {replicas: map[string]any{"min": 2, "max": 5}, want: float64(2)},
		"AutoscalingDisabled": {replicas: map[string]any{"min": 2, "max": 5}, autoscaling: map[string]any{"enabled": false}, want: float64(2)},
		"Autoscaling":         {replicas: map[string]any{"min": 2, "max": 5}, autoscaling: map[string]any{"enabled": true}},
		"AutoscalingMinOnly":  {replicas: map[string]any{"min": 1}, autoscaling: map[string]any{"enabled": true, "targetConcurrency": 4}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, "ReadWriteMany", "spec", "storage", "accessMode")
			if tc.replicas != nil {
				setPath(xr, tc.replicas, "spec", "replicas")
			}
			if tc.autoscaling != nil {
				setPath(xr, tc.autoscaling, "spec", "autoscaling")
			}
			servers, _ := pulled(t, xr, nil)
			spec := desiredMap(t, servers, render.ResourceDeployment)["spec"].(map[string]any)
			got, _ := spec["replicas"]
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("spec.replicas (-want +got):\n%s", diff)
			}
			_, hpa := servers.GetDesired().GetResources()[render.ResourceHPA]
			if diff := cmp.Diff(tc.want == nil, hpa); diff != "" {
				t.Errorf("HPA rendered (-want +got):\n%s", diff)
			}
		})
	}
}

// weightsOf is what a desired Deployment mounts as its model.
func weightsOf(d *appsv1.Deployment) (render.Weights, bool) {
	return render.ServedWeights(&d.Spec.Template)
}

// TestDeploymentKeepsServedWeights: while a new revision is pulled (or
// its pull failed) the servers keep the weights they serve, as the
// inference.inferno.io/weights annotation records; once the new Job is
// Complete they switch (DESIGN §4, garbage collection).
func TestDeploymentKeepsServedWeights(t *testing.T) {
	xr := testXR()
	obs := serving(t, xr, nil, 1, deploymentStatus(1, 1))
	oldHash := mustResolve(t, xr, nil).Model.Hash

	next := testXR()
	setPath(next, "v2.0", "spec", "model", "revision")
	newHash := mustResolve(t, next, nil).Model.Hash
	if oldHash == newHash {
		t.Fatalf("a new revision kept hash %s", oldHash)
	}
	fresh := run(t, newRequest(t, next, nil, obs...))
	newJob := pullJobResource(t, fresh)
	base := withoutObserved(obs, render.ResourceJobPrefix)
	with := func(status map[string]any) []observedObject {
		return append(base[:len(base):len(base)], observedFrom(t, fresh, newJob, status))
	}
	oldW := render.Weights{ID: oldHash, Claim: "llama-weights", SubPath: oldHash}
	newW := render.Weights{ID: newHash, Claim: "llama-weights", SubPath: newHash}

	cases := map[string]struct {
		observed []observedObject
		want     render.Weights
	}{
		"NewJobNotObserved": {observed: base, want: oldW},
		"NewJobRunning":     {observed: with(jobRunningStatus()), want: oldW},
		"NewJobFailed":      {observed: with(jobFailedStatus()), want: oldW},
		"NewJobComplete":    {observed: with(jobCompleteStatus()), want: newW},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, next, nil, tc.observed...))
			got, ok := weightsOf(desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment))
			if !ok {
				t.Fatal("the desired Deployment does not record its weights")
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("served weights (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeploymentWeightsMount: cached weights come from the cache volume's
// per-model directory; pvc:// weights from the user's claim and path, both
// read-only.
func TestDeploymentWeightsMount(t *testing.T) {
	type mount struct {
		Volume corev1.PersistentVolumeClaimVolumeSource
		Mount  corev1.VolumeMount
	}
	cases := map[string]struct {
		uri  string
		want func(hash string) mount
	}{
		"Cached": {uri: "hf://org/m", want: func(h string) mount {
			return mount{
				Volume: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "llama-weights", ReadOnly: true},
				Mount:  corev1.VolumeMount{Name: render.VolumeWeights, MountPath: "/model", SubPath: h, ReadOnly: true},
			}
		}},
		"PVCWithPath": {uri: "pvc://shared-models/llama/3.1", want: func(string) mount {
			return mount{
				Volume: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared-models", ReadOnly: true},
				Mount:  corev1.VolumeMount{Name: render.VolumeWeights, MountPath: "/model", SubPath: "llama/3.1", ReadOnly: true},
			}
		}},
		"PVCWhole": {uri: "pvc://shared-models", want: func(string) mount {
			return mount{
				Volume: corev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared-models", ReadOnly: true},
				Mount:  corev1.VolumeMount{Name: render.VolumeWeights, MountPath: "/model", ReadOnly: true},
			}
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, tc.uri, "spec", "model", "uri")
			var d *appsv1.Deployment
			if tc.uri[:6] == "pvc://" {
				d = desiredObject[appsv1.Deployment](t, run(t, newRequest(t, xr, nil)), render.ResourceDeployment)
			} else {
				servers, _ := pulled(t, xr, nil)
				d = desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment)
			}
			var got mount
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Name == render.VolumeWeights {
					got.Volume = *v.PersistentVolumeClaim
				}
			}
			for _, m := range d.Spec.Template.Spec.Containers[0].VolumeMounts {
				if m.Name == render.VolumeWeights {
					got.Mount = m
				}
			}
			hash := mustResolve(t, xr, nil).Model.Hash
			if diff := cmp.Diff(tc.want(hash), got); diff != "" {
				t.Errorf("weights mount (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(hash, d.Spec.Template.Annotations[resolve.AnnotationWeights]); diff != "" {
				t.Errorf("weights annotation (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeploymentRuntime: each framework's preset shapes the server.
func TestDeploymentRuntime(t *testing.T) {
	type server struct {
		Image            string
		Command, Args    []string
		Port             int32
		HealthPath       string
		StartupBudget    int32
		SharedMemory     bool
		DeadlineSeconds  int32
		ServiceTargetsIt bool
	}
	cases := map[string]struct {
		framework string
		serve     map[string]any
		want      server
	}{
		"VLLM": {framework: "vllm", want: server{
			Image: "vllm/vllm-openai:v0.11.0", Args: []string{"--model=$(MODEL_DIR)", "--served-model-name=$(MODEL_NAME)", "--port=$(PORT)"},
			Port: 8000, HealthPath: "/health", StartupBudget: 1800, SharedMemory: true, DeadlineSeconds: 2400,
		}},
		"Triton": {framework: "triton", want: server{
			Image: "nvcr.io/nvidia/tritonserver:25.01-py3", Command: []string{"tritonserver"},
			Args: []string{"--model-repository=$(MODEL_DIR)", "--http-port=$(PORT)", "--allow-grpc=false"},
			Port: 8000, HealthPath: "/v2/health/ready", StartupBudget: 1200, SharedMemory: true, DeadlineSeconds: 1800,
		}},
		"TGI": {framework: "tgi", want: server{
			Image: "ghcr.io/huggingface/text-generation-inference:3.3.4", Args: []string{"--model-id=$(MODEL_DIR)", "--port=$(PORT)"},
			Port: 8080, HealthPath: "/health", StartupBudget: 1800, SharedMemory: true, DeadlineSeconds: 2400,
		}},
		"Ollama": {framework: "ollama", want: server{
			Image: "ollama/ollama:0.12.3", Command: ollamaCommand(t), Port: 11434, HealthPath: "/api/version", StartupBudget: 600, DeadlineSeconds: 1200,
		}},
		"Fake": {framework: "fake", want: server{
			Image: "ghcr.io/inferno-ai/fake-model-server:v0.1.0", Args: []string{"--model-dir=$(MODEL_DIR)", "--port=$(PORT)"},
			Port: 8080, HealthPath: "/healthz", StartupBudget: 60, DeadlineSeconds: 660,
		}},
		"ServeOverrides": {framework: "fake", serve: map[string]any{"image": "my/server:1", "port": 9090, "args": []any{"--x"}}, want: server{
			Image: "my/server:1", Args: []string{"--x"}, Port: 9090, HealthPath: "/healthz", StartupBudget: 60, DeadlineSeconds: 660,
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, tc.framework, "spec", "model", "framework")
			if tc.serve != nil {
				setPath(xr, tc.serve, "spec", "serve")
			}
			servers, _ := pulled(t, xr, nil)
			d := desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment)
			c := d.Spec.Template.Spec.Containers[0]
			got := server{
				Image: c.Image, Command: c.Command, Args: c.Args, Port: c.Ports[0].ContainerPort,
				HealthPath: c.StartupProbe.HTTPGet.Path, StartupBudget: c.StartupProbe.FailureThreshold * c.StartupProbe.PeriodSeconds,
				DeadlineSeconds: *d.Spec.ProgressDeadlineSeconds,
			}
			for _, m := range c.VolumeMounts {
				if m.MountPath == "/dev/shm" {
					got.SharedMemory = true
				}
			}
			for _, p := range []*corev1.Probe{c.ReadinessProbe, c.LivenessProbe} {
				if p.HTTPGet.Path != got.HealthPath || p.HTTPGet.Port != intstr.FromString(render.PortName) {
					t.Errorf("probe %+v does not use %s on port %s", p.HTTPGet, got.HealthPath, render.PortName)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("server (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(corev1.ContainerPort{Name: render.PortName, ContainerPort: tc.want.Port, Protocol: corev1.ProtocolTCP}, c.Ports[0]); diff != "" {
				t.Errorf("port (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeploymentEnv: the claim's variables follow the function's, and one
// of the same name replaces it in place (HF_HUB_OFFLINE cannot be
// replaced: TestBadInput/ServeEnvHubOffline).
func TestDeploymentEnv(t *testing.T) {
	xr := testXR()
	setPath(xr, "5", "spec", "model", "version")
	setPath(xr, map[string]any{"env": []any{
		map[string]any{"name": "VLLM_LOGGING_LEVEL", "value": "DEBUG"},
		map[string]any{"name": "XDG_CACHE_HOME", "value": "/tmp/cache"},
	}}, "spec", "serve")
	servers, _ := pulled(t, xr, nil)
	d := desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment)
	want := []corev1.EnvVar{
		{Name: "MODEL_DIR", Value: "/model"},
		{Name: "MODEL_NAME", Value: "llama"},
		{Name: "MODEL_VERSION", Value: "5"},
		{Name: "PORT", Value: "8000"},
		{Name: "HF_HUB_OFFLINE", Value: "1"},
		{Name: "HOME", Value: "/tmp"},
		{Name: "XDG_CACHE_HOME", Value: "/tmp/cache"},
		{Name: "HF_HOME", Value: "/tmp/hf"},
		{Name: "VLLM_LOGGING_LEVEL", Value: "DEBUG"},
	}
	if diff := cmp.Diff(want, d.Spec.Template.Spec.Containers[0].Env); diff != "" {
		t.Errorf("env (-want +got):\n%s", diff)
	}
}

func TestDeploymentResources(t *testing.T) {
	type sched struct {
		Requests, Limits map[string]string
		NodeSelector     map[string]string
		Tolerations      []corev1.Toleration
	}
	list := func(l corev1.ResourceList) map[string]string {
		out := map[string]string{}
		for k, v := range l {
			out[string(k)] = v.String()
		}
		return out
	}
	cases := map[string]struct {
		resources map[string]any
		in        map[string]any
		want      sched
	}{
		"OneGPUDefaults": {
			resources: map[string]any{"gpu": 1},
			want: sched{
				Requests:    map[string]string{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"},
				Limits:      map[string]string{"memory": "8Gi", "nvidia.com/gpu": "1"},
				Tolerations: []corev1.Toleration{{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
			},
		},
		"NoGPU": {
			resources: map[string]any{"gpu": 0, "cpu": "500m", "memory": "1Gi"},
			want: sched{
				Requests: map[string]string{"cpu": "500m", "memory": "1Gi"},
				Limits:   map[string]string{"memory": "1Gi"},
			},
		},
		"InputGPUSettings": {
			resources: map[string]any{"gpu": 2, "cpu": "8", "memory": "64Gi"},
			in: map[string]any{"gpu": map[string]any{
				"resourceName": "amd.com/gpu", "nodeSelector": map[string]any{"pool": "mi300"},
				"tolerations": []any{map[string]any{"key": "dedicated", "operator": "Equal", "value": "ml", "effect": "NoSchedule"}},
			}},
			want: sched{
				Requests:     map[string]string{"cpu": "8", "memory": "64Gi", "amd.com/gpu": "2"},
				Limits:       map[string]string{"memory": "64Gi", "amd.com/gpu": "2"},
				NodeSelector: map[string]string{"pool": "mi300"},
				Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "ml", Effect: corev1.TaintEffectNoSchedule}},
			},
		},
	}
	pool := map[string]any{"scheduling": map[string]any{
		"nodeSelector": map[string]any{"inferno.io/pool": "cpu", "pool": "general"},
		"tolerations":  []any{map[string]any{"key": "inferno.io/pool", "operator": "Equal", "value": "cpu", "effect": "NoSchedule"}},
	}}
	poolToleration := corev1.Toleration{Key: "inferno.io/pool", Operator: corev1.TolerationOpEqual, Value: "cpu", Effect: corev1.TaintEffectNoSchedule}
	cases["NodePoolCPU"] = struct {
		resources map[string]any
		in        map[string]any
		want      sched
	}{
		resources: map[string]any{"gpu": 0, "cpu": "500m", "memory": "1Gi"},
		in:        pool,
		want: sched{
			Requests:     map[string]string{"cpu": "500m", "memory": "1Gi"},
			Limits:       map[string]string{"memory": "1Gi"},
			NodeSelector: map[string]string{"inferno.io/pool": "cpu", "pool": "general"},
			Tolerations:  []corev1.Toleration{poolToleration},
		},
	}
	// A GPU server on a pool carries both: the pool's selector with the GPU
	// selector over it, the pool's tolerations and then the GPU ones.
	gpuPool := map[string]any{"scheduling": pool["scheduling"], "gpu": map[string]any{"nodeSelector": map[string]any{"pool": "h100"}}}
	cases["NodePoolGPU"] = struct {
		resources map[string]any
		in        map[string]any
		want      sched
	}{
		resources: map[string]any{"gpu": 1},
		in:        gpuPool,
		want: sched{
			Requests:     map[string]string{"cpu": "2", "memory": "8Gi", "nvidia.com/gpu": "1"},
			Limits:       map[string]string{"memory": "8Gi", "nvidia.com/gpu": "1"},
			NodeSelector: map[string]string{"inferno.io/pool": "cpu", "pool": "h100"},
			Tolerations: []corev1.Toleration{poolToleration,
				{Key: "nvidia.com/gpu", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, "fake", "spec", "model", "framework")
			setPath(xr, tc.resources, "spec", "resources")
			servers, _ := pulled(t, xr, tc.in)
			d := desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment)
			p := d.Spec.Template.Spec
			got := sched{
				Requests: list(p.Containers[0].Resources.Requests), Limits: list(p.Containers[0].Resources.Limits),
				NodeSelector: p.NodeSelector, Tolerations: p.Tolerations,
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("scheduling (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPullJobPlacement: a pull Job runs on the Input's node pool, where
// the servers will run (a WaitForFirstConsumer volume binds on the node of
// its first pod), but never with the GPU selector: the pull needs no GPU.
func TestPullJobPlacement(t *testing.T) {
	in := map[string]any{
		"scheduling": map[string]any{
			"nodeSelector": map[string]any{"inferno.io/pool": "real"},
			"tolerations":  []any{map[string]any{"key": "inferno.io/pool", "operator": "Exists", "effect": "NoSchedule"}},
		},
		"gpu": map[string]any{"nodeSelector": map[string]any{"pool": "h100"}},
	}
	for name, tc := range map[string]struct {
		in       map[string]any
		selector map[string]string
		tol      []corev1.Toleration
	}{
		"NoPool": {},
		"Pool": {
			in:       in,
			selector: map[string]string{"inferno.io/pool": "real"},
			tol:      []corev1.Toleration{{Key: "inferno.io/pool", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}},
		},
	} {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, map[string]any{"gpu": 1}, "spec", "resources")
			rsp := run(t, newRequest(t, xr, tc.in))
			j := desiredObject[batchv1.Job](t, rsp, pullJobResource(t, rsp))
			p := j.Spec.Template.Spec
			if diff := cmp.Diff(tc.selector, p.NodeSelector); diff != "" {
				t.Errorf("pull pod nodeSelector (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.tol, p.Tolerations); diff != "" {
				t.Errorf("pull pod tolerations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeploymentStrategy: servers roll one extra server at a time and
// never with fewer ready servers than they ask for, whatever the volume;
// input.rollout sets other bounds, counts or percentages.
func TestDeploymentStrategy(t *testing.T) {
	rolling := func(surge, unavailable intstr.IntOrString) appsv1.DeploymentStrategy {
		return appsv1.DeploymentStrategy{
			Type:          appsv1.RollingUpdateDeploymentStrategyType,
			RollingUpdate: &appsv1.RollingUpdateDeployment{MaxSurge: &surge, MaxUnavailable: &unavailable},
		}
	}
	cases := map[string]struct {
		uri, mode string
		in        map[string]any
		want      appsv1.DeploymentStrategy
	}{
		"RWO": {uri: "hf://org/m", mode: "ReadWriteOnce", want: rolling(intstr.FromInt32(1), intstr.FromInt32(0))},
		"RWX": {uri: "hf://org/m", mode: "ReadWriteMany", want: rolling(intstr.FromInt32(1), intstr.FromInt32(0))},
		"PVC": {uri: "pvc://shared/m", mode: "ReadWriteOnce", want: rolling(intstr.FromInt32(1), intstr.FromInt32(0))},
		"NoSpareGPU": {
			uri: "hf://org/m", mode: "ReadWriteMany",
			in:   map[string]any{"rollout": map[string]any{"maxSurge": 0, "maxUnavailable": 1}},
			want: rolling(intstr.FromInt32(0), intstr.FromInt32(1)),
		},
		"Percentages": {
			uri: "hf://org/m", mode: "ReadWriteMany",
			in:   map[string]any{"rollout": map[string]any{"maxSurge": "50%", "maxUnavailable": "10%"}},
			want: rolling(intstr.FromString("50%"), intstr.FromString("10%")),
		},
		"OnlySurge": {
			uri: "hf://org/m", mode: "ReadWriteMany",
			in:   map[string]any{"rollout": map[string]any{"maxSurge": 2}},
			want: rolling(intstr.FromInt32(2), intstr.FromInt32(0)),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, tc.uri, "spec", "model", "uri")
			setPath(xr, tc.mode, "spec", "storage", "accessMode")
			var d *appsv1.Deployment
			if tc.uri[:6] == "pvc://" {
				d = desiredObject[appsv1.Deployment](t, run(t, newRequest(t, xr, tc.in)), render.ResourceDeployment)
			} else {
				servers, _ := pulled(t, xr, tc.in)
				d = desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment)
			}
			if diff := cmp.Diff(tc.want, d.Spec.Strategy); diff != "" {
				t.Errorf("strategy (-want +got):\n%s", diff)
			}
		})
	}
}

// TestDeploymentSelectorStable: the selector (immutable) never holds
// labels that change with the spec.
func TestDeploymentSelectorStable(t *testing.T) {
	a, b := testXR(), testXR()
	setPath(b, "9", "spec", "model", "version")
	setPath(b, "tgi", "spec", "model", "framework")
	setPath(b, "hf://other/model", "spec", "model", "uri")
	sa, sb := mustResolve(t, a, nil), mustResolve(t, b, nil)
	da, db := render.Deployment(sa, sa.Primary(), primaryWeights(t, sa), ptr.To(int32(1))), render.Deployment(sb, sb.Primary(), primaryWeights(t, sb), ptr.To(int32(1)))
	want := &metav1.LabelSelector{MatchLabels: map[string]string{resolve.LabelInstance: "llama", resolve.LabelComponent: resolve.ComponentServer}}
	if diff := cmp.Diff(want, da.Spec.Selector); diff != "" {
		t.Errorf("selector (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(da.Spec.Selector, db.Spec.Selector); diff != "" {
		t.Errorf("selector changed with the spec (-before +after):\n%s", diff)
	}
}

func TestServedWeights(t *testing.T) {
	deploy := func(annotation, claim, container, subPath string) *appsv1.Deployment {
		d := &appsv1.Deployment{}
		if annotation != "" {
			d.Spec.Template.Annotations = map[string]string{resolve.AnnotationWeights: annotation}
		}
		if claim != "" {
			d.Spec.Template.Spec.Volumes = []corev1.Volume{{Name: render.VolumeWeights, VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}}}
		}
		d.Spec.Template.Spec.Containers = []corev1.Container{{Name: container, VolumeMounts: []corev1.VolumeMount{{Name: render.VolumeWeights, SubPath: subPath}}}}
		return d
	}
	cases := map[string]struct {
		d      *appsv1.Deployment
		want   render.Weights
		wantOK bool
	}{
		"Ours":            {d: deploy("abc", "llama-weights", render.ServerContainer, "abc"), want: render.Weights{ID: "abc", Claim: "llama-weights", SubPath: "abc"}, wantOK: true},
		"NoSubPath":       {d: deploy("abc", "shared", render.ServerContainer, ""), want: render.Weights{ID: "abc", Claim: "shared", SubPath: ""}, wantOK: true},
		"NoAnnotation":    {d: deploy("", "llama-weights", render.ServerContainer, "abc"), want: render.Weights{ID: "", Claim: "llama-weights", SubPath: "abc"}},
		"NoVolume":        {d: deploy("abc", "", render.ServerContainer, "abc"), want: render.Weights{ID: "abc", Claim: "", SubPath: "abc"}},
		"OtherContainer":  {d: deploy("abc", "llama-weights", "sidecar", "x"), want: render.Weights{ID: "abc", Claim: "llama-weights", SubPath: ""}, wantOK: true},
		"EmptyDeployment": {d: &appsv1.Deployment{}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, ok := render.ServedWeights(&tc.d.Spec.Template)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("weights (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantOK, ok); diff != "" {
				t.Errorf("ok (-want +got):\n%s", diff)
			}
		})
	}
}

func TestMergeEnv(t *testing.T) {
	e := func(kv ...string) []corev1.EnvVar {
		var out []corev1.EnvVar
		for i := 0; i < len(kv); i += 2 {
			out = append(out, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
		return out
	}
	cases := map[string]struct {
		base, extra, want []corev1.EnvVar
	}{
		"Empty":          {},
		"AppendOnly":     {base: e("A", "1"), extra: e("B", "2"), want: e("A", "1", "B", "2")},
		"ReplaceInPlace": {base: e("A", "1", "B", "2", "C", "3"), extra: e("B", "x"), want: e("A", "1", "B", "x", "C", "3")},
		"BaseOnly":       {base: e("A", "1"), want: e("A", "1")},
		"ExtraOnly":      {extra: e("A", "1"), want: e("A", "1")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			before := append([]corev1.EnvVar(nil), tc.base...)
			got := resolve.MergeEnv(tc.base, tc.extra)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mergeEnv (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tc.base); diff != "" {
				t.Errorf("mergeEnv changed its base (-before +after):\n%s", diff)
			}
		})
	}
}

// TestNoAPIToken: no pod mounts a Kubernetes API token unless the Input
// grants the servers one; the servers run under the Input's ServiceAccount
// when it names one, and pull pods never get a token.
func TestNoAPIToken(t *testing.T) {
	type pods struct {
		ServerAccount          string
		ServerToken, PullToken *bool
	}
	for name, tc := range map[string]struct {
		in   map[string]any
		want pods
	}{
		"NoInput":             {want: pods{ServerToken: ptr.To(false), PullToken: ptr.To(false)}},
		"ServiceAccount":      {in: map[string]any{"serverServiceAccount": map[string]any{"name": "model-servers"}}, want: pods{ServerAccount: "model-servers", ServerToken: ptr.To(false), PullToken: ptr.To(false)}},
		"ServiceAccountToken": {in: map[string]any{"serverServiceAccount": map[string]any{"name": "vault-auth", "automountToken": true}}, want: pods{ServerAccount: "vault-auth", ServerToken: ptr.To(true), PullToken: ptr.To(false)}},
	} {
		t.Run(name, func(t *testing.T) {
			servers, _ := pulled(t, testXR(), tc.in)
			d := desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment)
			j := desiredObject[batchv1.Job](t, servers, pullJobResource(t, servers))
			got := pods{
				ServerAccount: d.Spec.Template.Spec.ServiceAccountName,
				ServerToken:   d.Spec.Template.Spec.AutomountServiceAccountToken,
				PullToken:     j.Spec.Template.Spec.AutomountServiceAccountToken,
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("service accounts and tokens (-want +got):\n%s", diff)
			}
			if j.Spec.Template.Spec.ServiceAccountName != "" {
				t.Errorf("the pull Job runs as %q; it must keep the namespace's default", j.Spec.Template.Spec.ServiceAccountName)
			}
		})
	}
}

// primaryWeights are the weights the primary version of s wants.
func primaryWeights(t testing.TB, s *resolve.Spec) render.Weights {
	t.Helper()
	src, err := plan.NewWeightsSource(s, s.Primary(), nil, observe.Objects{}, false)
	if err != nil {
		t.Fatal(err)
	}
	return src.Wanted()
}

// ollamaCommand is the ollama preset's command: its start script, run by
// sh with $0 "ollama".
func ollamaCommand(t *testing.T) []string {
	t.Helper()
	for _, s := range v1beta1.ServeScripts() {
		if s.File == "scripts/serve/ollama.sh" {
			return []string{"/bin/sh", "-c", s.Text, "ollama"}
		}
	}
	t.Fatal("no built-in start script scripts/serve/ollama.sh")
	return nil
}
