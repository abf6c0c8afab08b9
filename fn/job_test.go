package fn

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// restrictedViolations lists how a pod spec breaks the Kubernetes
// "restricted" Pod Security Standard (v1.35), empty when it meets it.
func restrictedViolations(p corev1.PodSpec) []string {
	var v []string
	if p.HostNetwork || p.HostPID || p.HostIPC {
		v = append(v, "host namespaces")
	}
	psc := p.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		v = append(v, "pod runAsUser 0")
	}
	for _, vol := range p.Volumes {
		s := vol.VolumeSource
		switch {
		case s.ConfigMap != nil, s.CSI != nil, s.DownwardAPI != nil, s.EmptyDir != nil, s.Ephemeral != nil,
			s.PersistentVolumeClaim != nil, s.Projected != nil, s.Secret != nil:
		default:
			v = append(v, "volume "+vol.Name+" of a disallowed type")
		}
	}
	containers := append(append([]corev1.Container(nil), p.InitContainers...), p.Containers...)
	for _, c := range containers {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		if sc.Privileged != nil && *sc.Privileged {
			v = append(v, c.Name+": privileged")
		}
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			v = append(v, c.Name+": allowPrivilegeEscalation not false")
		}
		if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
			v = append(v, c.Name+": capabilities do not drop ALL")
		} else {
			for _, a := range sc.Capabilities.Add {
				if a != "NET_BIND_SERVICE" {
					v = append(v, c.Name+": adds capability "+string(a))
				}
			}
		}
		nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) || (sc.RunAsNonRoot == nil && psc.RunAsNonRoot != nil && *psc.RunAsNonRoot)
		if !nonRoot {
			v = append(v, c.Name+": runAsNonRoot not true")
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			v = append(v, c.Name+": runAsUser 0")
		}
		seccomp := sc.SeccompProfile
		if seccomp == nil {
			seccomp = psc.SeccompProfile
		}
		if seccomp == nil || (seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault && seccomp.Type != corev1.SeccompProfileTypeLocalhost) {
			v = append(v, c.Name+": seccomp profile not RuntimeDefault or Localhost")
		}
		for _, port := range c.Ports {
			if port.HostPort != 0 {
				v = append(v, c.Name+": hostPort")
			}
		}
	}
	return v
}

// TestRestrictedPodSecurity: the pods of the pull Job and of the
// Deployment meet the restricted standard, with and without GPU, shared
// memory and credentials (DESIGN §4, security).
func TestRestrictedPodSecurity(t *testing.T) {
	cases := map[string]func(xr map[string]any){
		"VLLMWithGPU": func(map[string]any) {},
		"FakeNoGPU": func(xr map[string]any) {
			setPath(xr, "fake", "spec", "model", "framework")
			setPath(xr, 0, "spec", "resources", "gpu")
		},
		"WithCredentials": func(xr map[string]any) {
			setPath(xr, map[string]any{"name": "hf-credentials", "key": "token"}, "spec", "model", "credentialsSecretRef")
		},
		"LlamaCPPOverS3": func(xr map[string]any) {
			setPath(xr, "llamacpp", "spec", "model", "framework")
			setPath(xr, "s3://models/llama.gguf", "spec", "model", "uri")
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			edit(xr)
			servers, obs := pulled(t, xr, nil)
			job := desiredObject[batchv1.Job](t, servers, obs[1].Name)
			deploy := desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment)
			for kind, spec := range map[string]corev1.PodSpec{"Job": job.Spec.Template.Spec, "Deployment": deploy.Spec.Template.Spec} {
				if diff := cmp.Diff([]string(nil), restrictedViolations(spec)); diff != "" {
					t.Errorf("%s pod breaks the restricted standard (-want +got):\n%s", kind, diff)
				}
				want := &corev1.PodSecurityContext{
					RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(render.NonRootUID), RunAsGroup: ptr.To(render.NonRootUID), FSGroup: ptr.To(render.NonRootUID),
					SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
				}
				if diff := cmp.Diff(want, spec.SecurityContext); diff != "" {
					t.Errorf("%s pod security context (-want +got):\n%s", kind, diff)
				}
			}
			// The servers only ever read the weights.
			var weightsMounts []bool
			for _, m := range deploy.Spec.Template.Spec.Containers[0].VolumeMounts {
				if m.Name == render.VolumeWeights {
					weightsMounts = append(weightsMounts, m.ReadOnly)
				}
			}
			if diff := cmp.Diff([]bool{true}, weightsMounts); diff != "" {
				t.Errorf("server weights mounts readOnly (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRestrictedViolationsDetects keeps the checker above honest.
func TestRestrictedViolationsDetects(t *testing.T) {
	ok := corev1.PodSpec{SecurityContext: render.PodSecurityContext(), Containers: []corev1.Container{{Name: "c", SecurityContext: render.ContainerSecurityContext()}}}
	cases := map[string]struct {
		edit func(p *corev1.PodSpec)
		want []string
	}{
		"Compliant": {edit: func(*corev1.PodSpec) {}},
		"HostPath": {edit: func(p *corev1.PodSpec) {
			p.Volumes = []corev1.Volume{{Name: "h", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, want: []string{"volume h of a disallowed type"}},
		"Escalation":     {edit: func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true) }, want: []string{"c: allowPrivilegeEscalation not false"}},
		"NoSeccomp":      {edit: func(p *corev1.PodSpec) { p.SecurityContext.SeccompProfile = nil }, want: []string{"c: seccomp profile not RuntimeDefault or Localhost"}},
		"CapsNotDropped": {edit: func(p *corev1.PodSpec) { p.Containers[0].SecurityContext.Capabilities = nil }, want: []string{"c: capabilities do not drop ALL"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := *ok.DeepCopy()
			tc.edit(&p)
			if diff := cmp.Diff(tc.want, restrictedViolations(p)); diff != "" {
				t.Errorf("violations (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPullJobNoTTL: the Job sets no ttlSecondsAfterFinished; the function
// keeps returning it, so a TTL would make it pull again (DESIGN §4).
func TestPullJobNoTTL(t *testing.T) {
	for _, uri := range []string{"hf://org/m", "s3://b/p", "gs://b/p", "https://h/f.gguf", "http://h/f.gguf"} {
		t.Run(uri, func(t *testing.T) {
			xr := testXR()
			setPath(xr, uri, "spec", "model", "uri")
			rsp := run(t, newRequest(t, xr, nil))
			job := desiredMap(t, rsp, pullJobResource(t, rsp))
			spec, _ := job["spec"].(map[string]any)
			_, has := spec["ttlSecondsAfterFinished"]
			if diff := cmp.Diff(false, has); diff != "" {
				t.Errorf("ttlSecondsAfterFinished present (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPullJobNameAndResourceName: the Job's name and its composition
// resource name change with the uri and the revision, and only with what
// the pod template holds: not with spec.model.version (DESIGN §4, Jobs are
// immutable).
func TestPullJobNameAndResourceName(t *testing.T) {
	names := func(t *testing.T, xr map[string]any) (resourceName, jobName string) {
		t.Helper()
		rsp := run(t, newRequest(t, xr, nil))
		r := pullJobResource(t, rsp)
		return r, desiredObject[batchv1.Job](t, rsp, r).Name
	}
	baseRes, baseJob := names(t, testXR())
	if diff := cmp.Diff("llama-pull-"+strings.TrimPrefix(baseRes, render.ResourceJobPrefix), baseJob); diff != "" {
		t.Errorf("Job name does not carry the resource's hash (-want +got):\n%s", diff)
	}

	revision := func(r string) func(xr map[string]any) {
		return func(xr map[string]any) { setPath(xr, r, "spec", "model", "revision") }
	}
	cases := map[string]struct {
		base, edit func(xr map[string]any)
		same       bool
	}{
		"Unchanged":        {edit: func(map[string]any) {}, same: true},
		"VersionChanged":   {edit: func(xr map[string]any) { setPath(xr, "2", "spec", "model", "version") }, same: true},
		"FrameworkChanged": {edit: func(xr map[string]any) { setPath(xr, "tgi", "spec", "model", "framework") }, same: true},
		"ReplicasChanged":  {edit: func(xr map[string]any) { setPath(xr, map[string]any{"min": 2}, "spec", "replicas") }, same: true},
		"ServeChanged":     {edit: func(xr map[string]any) { setPath(xr, map[string]any{"image": "my/vllm:2"}, "spec", "serve") }, same: true},
		"ResourcesChanged": {edit: func(xr map[string]any) { setPath(xr, 2, "spec", "resources", "gpu") }, same: true},
		"URIChanged":       {edit: func(xr map[string]any) { setPath(xr, "hf://meta-llama/Llama-3.2-3B", "spec", "model", "uri") }},
		"RevisionSet":      {edit: revision("main")},
		"RevisionChanged":  {base: revision("main"), edit: revision("0e9e39f249a16976918f6564b8830bc894c89659")},
		"RevisionKept":     {base: revision("main"), edit: revision("main"), same: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			base, xr := testXR(), testXR()
			if tc.base != nil {
				tc.base(base)
				tc.base(xr)
			}
			tc.edit(xr)
			baseRes, baseJob := names(t, base)
			res, job := names(t, xr)
			got := []bool{res == baseRes, job == baseJob}
			if diff := cmp.Diff([]bool{tc.same, tc.same}, got); diff != "" {
				t.Errorf("[resource name same, Job name same] (-want +got):\n%s\nbase %s/%s, got %s/%s", diff, baseRes, baseJob, res, job)
			}
		})
	}
}

// TestPullJobSpec: what the puller gets to work with.
func TestPullJobSpec(t *testing.T) {
	xr := testXR()
	setPath(xr, "main", "spec", "model", "revision")
	setPath(xr, "4", "spec", "model", "version")
	rsp := run(t, newRequest(t, xr, map[string]any{"pullBackoffLimit": 5}))
	job := desiredObject[batchv1.Job](t, rsp, pullJobResource(t, rsp))
	hash := mustResolve(t, xr, nil).Model.Hash

	type summary struct {
		Namespace      string
		Annotations    map[string]string
		BackoffLimit   int32
		RestartPolicy  corev1.RestartPolicy
		PodHasVersion  bool
		Image          string
		Env            []corev1.EnvVar
		Mounts         []corev1.VolumeMount
		ClaimName      string
		TmpIsEmptyDir  bool
		CommandIsShell bool
	}
	c := job.Spec.Template.Spec.Containers[0]
	_, podHasVersion := job.Spec.Template.Labels[resolve.LabelVersion]
	got := summary{
		Namespace: job.Namespace, Annotations: job.Annotations, BackoffLimit: *job.Spec.BackoffLimit,
		RestartPolicy: job.Spec.Template.Spec.RestartPolicy, PodHasVersion: podHasVersion,
		Image: c.Image, Env: c.Env, Mounts: c.VolumeMounts,
		ClaimName:      job.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName,
		TmpIsEmptyDir:  job.Spec.Template.Spec.Volumes[1].EmptyDir != nil,
		CommandIsShell: len(c.Command) == 3 && c.Command[0] == "/bin/sh" && strings.Contains(c.Command[2], ".inferno-complete"),
	}
	want := summary{
		Namespace:     "team-a",
		Annotations:   map[string]string{resolve.AnnotationModelURI: "hf://meta-llama/Llama-3.1-8B-Instruct"},
		BackoffLimit:  5,
		RestartPolicy: corev1.RestartPolicyNever,
		Image:         "vllm/vllm-openai:v0.11.0",
		Env: []corev1.EnvVar{
			{Name: "MODEL_URI", Value: "hf://meta-llama/Llama-3.1-8B-Instruct"},
			{Name: "MODEL_SOURCE", Value: "meta-llama/Llama-3.1-8B-Instruct"},
			{Name: "MODEL_REVISION", Value: "main"},
			{Name: "TARGET_DIR", Value: "/cache/" + hash},
			{Name: "PULL_STALL_SECONDS", Value: "300"},
			{Name: "HOME", Value: "/tmp"},
			{Name: "XDG_CACHE_HOME", Value: "/tmp/.cache"},
			{Name: "HF_HOME", Value: "/tmp/hf"},
		},
		Mounts:         []corev1.VolumeMount{{Name: render.VolumeWeights, MountPath: "/cache"}, {Name: render.VolumeTmp, MountPath: "/tmp"}},
		ClaimName:      "llama-weights",
		TmpIsEmptyDir:  true,
		CommandIsShell: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("pull Job (-want +got):\n%s", diff)
	}
}

// secretFinder reports whether a response carries a Secret object or an
// inline value for a credential variable anywhere.
func secretLeaks(t *testing.T, rsp *fnv1.RunFunctionResponse, credentialEnv ...string) []string {
	t.Helper()
	var leaks []string
	for _, n := range desiredNames(rsp) {
		m := desiredMap(t, rsp, n)
		if m["kind"] == "Secret" {
			leaks = append(leaks, n+" is a Secret")
		}
		b, _ := json.Marshal(m)
		for _, name := range credentialEnv {
			if strings.Contains(string(b), fmt.Sprintf(`"name":%q,"value"`, name)) || strings.Contains(string(b), fmt.Sprintf(`"value":%q`, "s3cr3t")) {
				leaks = append(leaks, n+" sets "+name+" inline")
			}
		}
	}
	return leaks
}

// TestSecretsOnlyByReference: credentials reach the pull Job by reference
// alone, and only as the variables its puller reads for them: a key
// becomes the puller's token variable through secretKeyRef; without a key
// the key of the variable's own name does (for s3:// the AWS key pair and
// an optional session token); nothing is ever mounted with envFrom, so a
// Secret cannot set the puller's endpoint or proxy; and the servers never
// see it (DESIGN §4, secrets).
func TestSecretsOnlyByReference(t *testing.T) {
	type creds struct {
		Env     []corev1.EnvVar
		EnvFrom []corev1.EnvFromSource
	}
	ref := func(env, secret, key string) []corev1.EnvVar {
		return []corev1.EnvVar{{Name: env, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: secret}, Key: key,
		}}}}
	}
	cases := map[string]struct {
		uri    string
		secret map[string]any
		in     map[string]any
		want   creds
	}{
		"None": {uri: "hf://org/m"},
		"HFKey": {
			uri: "hf://org/m", secret: map[string]any{"name": "hf-credentials", "key": "token"},
			want: creds{Env: ref("HF_TOKEN", "hf-credentials", "token")},
		},
		"GSKey": {
			uri: "gs://bucket/m", secret: map[string]any{"name": "gcp", "key": "key.json"},
			want: creds{Env: ref("GOOGLE_CREDENTIALS_JSON", "gcp", "key.json")},
		},
		"HTTPSKey": {
			uri: "https://h/m.gguf", secret: map[string]any{"name": "web", "key": "bearer"},
			want: creds{Env: ref("BEARER_TOKEN", "web", "bearer")},
		},
		"S3KeyFromInputTokenEnv": {
			// A platform whose s3 puller reads one token names it.
			uri: "s3://bucket/m", secret: map[string]any{"name": "aws", "key": "token"},
			in:   map[string]any{"pullers": map[string]any{"s3": map[string]any{"tokenEnv": "S3_TOKEN"}}},
			want: creds{Env: ref("S3_TOKEN", "aws", "token")},
		},
		"HFWithoutKey": {
			uri: "hf://org/m", secret: map[string]any{"name": "hf-credentials"},
			want: creds{Env: ref("HF_TOKEN", "hf-credentials", "HF_TOKEN")},
		},
		"GSWithoutKey": {
			uri: "gs://bucket/m", secret: map[string]any{"name": "gcp"},
			want: creds{Env: ref("GOOGLE_CREDENTIALS_JSON", "gcp", "GOOGLE_CREDENTIALS_JSON")},
		},
		"HTTPSWithoutKey": {
			uri: "https://h/m.gguf", secret: map[string]any{"name": "web"},
			want: creds{Env: ref("BEARER_TOKEN", "web", "BEARER_TOKEN")},
		},
		"InputTokenEnv": {
			uri: "hf://org/m", secret: map[string]any{"name": "hub-token", "key": "token"},
			in:   map[string]any{"pullers": map[string]any{"hf": map[string]any{"tokenEnv": "HUGGING_FACE_HUB_TOKEN"}}},
			want: creds{Env: ref("HUGGING_FACE_HUB_TOKEN", "hub-token", "token")},
		},
		"S3KeyPair": {
			uri: "s3://bucket/m", secret: map[string]any{"name": "aws"},
			want: creds{Env: append(append(ref("AWS_ACCESS_KEY_ID", "aws", "AWS_ACCESS_KEY_ID"), ref("AWS_SECRET_ACCESS_KEY", "aws", "AWS_SECRET_ACCESS_KEY")...),
				corev1.EnvVar{Name: "AWS_SESSION_TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
					LocalObjectReference: corev1.LocalObjectReference{Name: "aws"}, Key: "AWS_SESSION_TOKEN", Optional: ptr.To(true),
				}}})},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, tc.uri, "spec", "model", "uri")
			if tc.secret != nil {
				setPath(xr, tc.secret, "spec", "model", "credentialsSecretRef")
			}
			servers, obs := pulled(t, xr, tc.in)
			job := desiredObject[batchv1.Job](t, servers, obs[1].Name)
			c := job.Spec.Template.Spec.Containers[0]
			got := creds{EnvFrom: c.EnvFrom}
			for _, e := range c.Env {
				if e.ValueFrom != nil {
					got.Env = append(got.Env, e)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Job credentials (-want +got):\n%s", diff)
			}
			if leaks := secretLeaks(t, servers, "HF_TOKEN", "GOOGLE_CREDENTIALS_JSON", "BEARER_TOKEN", "AWS_SECRET_ACCESS_KEY", "HUGGING_FACE_HUB_TOKEN"); len(leaks) > 0 {
				t.Errorf("inline secrets: %v", leaks)
			}
			// The servers download nothing: they never see the Secret.
			d := desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment)
			b, _ := json.Marshal(d.Spec.Template.Spec)
			if tc.secret != nil && strings.Contains(string(b), tc.secret["name"].(string)) {
				t.Errorf("the Deployment refers to Secret %v: %s", tc.secret["name"], b)
			}
			if strings.Contains(string(b), "secretKeyRef") || strings.Contains(string(b), "secretRef") {
				t.Errorf("the Deployment reads a Secret: %s", b)
			}
		})
	}
}

// TestServerSecretsPassThroughByReference: a claim's server env that
// reads a Secret stays a reference in the Deployment.
func TestServerSecretsPassThroughByReference(t *testing.T) {
	xr := testXR()
	setPath(xr, map[string]any{"env": []any{map[string]any{
		"name": "API_KEY", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "llama-api", "key": "key"}},
	}}}, "spec", "serve")
	servers, _ := pulled(t, xr, nil)
	d := desiredObject[appsv1.Deployment](t, servers, render.ResourceDeployment)
	var got []corev1.EnvVar
	for _, e := range d.Spec.Template.Spec.Containers[0].Env {
		if e.Name == "API_KEY" {
			got = append(got, e)
		}
	}
	want := []corev1.EnvVar{{Name: "API_KEY", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
		LocalObjectReference: corev1.LocalObjectReference{Name: "llama-api"}, Key: "key",
	}}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("API_KEY (-want +got):\n%s", diff)
	}
}

// TestNoJobForPVCModels: pvc:// weights are mounted, never pulled.
func TestNoJobForPVCModels(t *testing.T) {
	xr := testXR()
	setPath(xr, "pvc://shared-models/llama", "spec", "model", "uri")
	rsp := run(t, newRequest(t, xr, nil))
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) || n == render.ResourcePVC {
			t.Errorf("pvc:// model renders %s", n)
		}
	}
	if diff := cmp.Diff([]string{render.ResourceDeployment, render.ResourceService}, desiredNames(rsp)); diff != "" {
		t.Errorf("desired (-want +got):\n%s", diff)
	}
}

// TestPullsEnd: every pull Job ends. It has a deadline (the Input's, six
// hours by default), fails at once when the puller reports a stall, tells
// the puller the stall period, and a stalled or timed-out Job reports a
// reason of its own, on an InferenceService and on a ModelCache.
func TestPullsEnd(t *testing.T) {
	type spec struct {
		Deadline int64
		Stall    string
		FailJob  []int32
	}
	for name, tc := range map[string]struct {
		in   map[string]any
		want spec
	}{
		"Defaults": {want: spec{Deadline: 21600, Stall: "300", FailJob: []int32{75}}},
		"Input":    {in: map[string]any{"pullDeadlineSeconds": 3600, "pullStallSeconds": 120}, want: spec{Deadline: 3600, Stall: "120", FailJob: []int32{75}}},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, testXR(), tc.in))
			j := desiredObject[batchv1.Job](t, rsp, pullJobResource(t, rsp))
			got := spec{Stall: envValue(j.Spec.Template.Spec.Containers[0].Env, "PULL_STALL_SECONDS")}
			if j.Spec.ActiveDeadlineSeconds != nil {
				got.Deadline = *j.Spec.ActiveDeadlineSeconds
			}
			if p := j.Spec.PodFailurePolicy; p != nil && len(p.Rules) > 0 && p.Rules[0].Action == batchv1.PodFailurePolicyActionFailJob && p.Rules[0].OnExitCodes != nil {
				got.FailJob = p.Rules[0].OnExitCodes.Values
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("pull Job (-want +got):\n%s", diff)
			}
		})
	}

	failedWith := func(reason, message string) map[string]any {
		return map[string]any{"failed": 1, "conditions": []any{
			map[string]any{"type": "FailureTarget", "status": "True", "reason": reason, "message": message},
			map[string]any{"type": "Failed", "status": "True", "reason": reason, "message": message},
		}}
	}
	stalled := failedWith("PodFailurePolicy", "Container pull for pod team-a/llama-pull-x-abcde failed with exit code 75 matching FailJob rule at index 0")
	timedOut := failedWith("DeadlineExceeded", "Job was active longer than specified deadline")
	for name, tc := range map[string]struct {
		status       map[string]any
		reason, says string
	}{
		"Stalled":  {status: stalled, reason: "PullStalled", says: "made no progress for 300s"},
		"TimedOut": {status: timedOut, reason: "PullTimedOut", says: "input.pullDeadlineSeconds"},
		"Failed":   {status: jobFailedStatus(), reason: "PullFailed", says: "BackoffLimitExceeded"},
	} {
		t.Run("InferenceService/"+name, func(t *testing.T) {
			fresh := run(t, newRequest(t, testXR(), nil))
			rsp := run(t, newRequest(t, testXR(), nil,
				observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Bound")),
				observedFrom(t, fresh, pullJobResource(t, fresh), tc.status)))
			type got struct{ Reason, Phase string }
			c := conditionsOf(rsp)[0]
			if diff := cmp.Diff(got{tc.reason, "Failed"}, got{c.Reason, statusOf(rsp)["phase"].(string)}); diff != "" {
				t.Errorf("WeightsReady reason and phase (-want +got):\n%s", diff)
			}
			if msg := conditionMessage(rsp, reason.ConditionWeightsReady); !strings.Contains(msg, tc.says) {
				t.Errorf("message %q does not say %q", msg, tc.says)
			}
		})
		t.Run("ModelCache/"+name, func(t *testing.T) {
			cache := readYAML(t, cacheXRPath)
			fresh := run(t, newRequest(t, cache, nil))
			var obs []observedObject
			for _, n := range desiredNames(fresh) {
				if strings.HasPrefix(n, render.ResourceJobPrefix) {
					obs = append(obs, observedFrom(t, fresh, n, tc.status))
				}
			}
			rsp := run(t, newRequest(t, cache, nil, obs...))
			if got := conditionsOf(rsp)[0].Reason; got != tc.reason {
				t.Errorf("ModelCache WeightsReady reason %q, want %q", got, tc.reason)
			}
		})
	}
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}
