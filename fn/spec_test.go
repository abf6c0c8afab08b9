package fn

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// inputFrom decodes an Input map (nil for none) as RunFunction would.
func inputFrom(t testing.TB, m map[string]any) *v1beta1.Input {
	t.Helper()
	in := &v1beta1.Input{}
	if m == nil {
		return in
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, in); err != nil {
		t.Fatal(err)
	}
	return in
}

// resolveXR decodes and resolves an XR with an Input map.
func resolveXR(t testing.TB, xr, in map[string]any) (*resolve.Spec, []string, error) {
	t.Helper()
	x, err := resolve.DecodeXR(mustStruct(t, xr))
	if err != nil {
		return nil, nil, err
	}
	return resolve.Resolve(x, inputFrom(t, in))
}

func mustResolve(t testing.TB, xr, in map[string]any) *resolve.Spec {
	t.Helper()
	s, _, err := resolveXR(t, xr, in)
	if err != nil {
		t.Fatalf("resolve: %v", err)
	}
	return s
}

// resolved is the part of a service the tests compare, with quantities as
// strings.
type resolved struct {
	Name, Namespace          string
	Scheme, Source           string
	Framework                string
	Min, Max                 int32
	CPU, Memory, GPU         string
	GPUResource              string
	StorageSize, Class, Mode string
	Backoff                  int32
	Image                    string
	Port                     int32
	PullerImage, TokenEnv    string
	Autoscaling              *resolve.Autoscaling
}

func summarize(s *resolve.Spec) resolved {
	r := resolved{
		Name: s.Name, Namespace: s.Namespace, Scheme: s.Model.Scheme, Source: s.Model.Source,
		Framework: string(s.Model.Framework), Min: s.MinReplicas, Max: s.MaxReplicas,
		CPU: s.CPU.String(), Memory: s.Memory.String(), GPU: strconv.Itoa(int(s.GPU)),
		GPUResource: s.GPUSettings.ResourceName,
		StorageSize: s.Storage.Size.String(), Class: s.Storage.Class, Mode: string(s.Storage.AccessMode),
		Backoff: s.Backoff, Image: s.Runtime.Image, PullerImage: s.Puller.Image, TokenEnv: s.Puller.TokenEnv,
		Autoscaling: s.Autoscaling,
	}
	if s.Runtime.Port != nil {
		r.Port = *s.Runtime.Port
	}
	return r
}

func TestResolveDefaults(t *testing.T) {
	cases := map[string]struct {
		xr   func() map[string]any
		in   map[string]any
		want resolved
	}{
		"EmptyInput": {
			xr: testXR,
			want: resolved{
				Name: "llama", Namespace: "team-a", Scheme: "hf", Source: "meta-llama/Llama-3.1-8B-Instruct", Framework: "vllm",
				Min: 1, Max: 1, CPU: "2", Memory: "8Gi", GPU: "1", GPUResource: "nvidia.com/gpu",
				StorageSize: "50Gi", Mode: "ReadWriteOnce", Backoff: 3,
				Image: "vllm/vllm-openai:v0.11.0", Port: 8000, PullerImage: "vllm/vllm-openai:v0.11.0", TokenEnv: "HF_TOKEN",
			},
		},
		"FrameworkDefaultsToVLLM": {
			xr: func() map[string]any {
				xr := testXR()
				delete(xr["spec"].(map[string]any)["model"].(map[string]any), "framework")
				return xr
			},
			want: resolved{
				Name: "llama", Namespace: "team-a", Scheme: "hf", Source: "meta-llama/Llama-3.1-8B-Instruct", Framework: "vllm",
				Min: 1, Max: 1, CPU: "2", Memory: "8Gi", GPU: "1", GPUResource: "nvidia.com/gpu",
				StorageSize: "50Gi", Mode: "ReadWriteOnce", Backoff: 3,
				Image: "vllm/vllm-openai:v0.11.0", Port: 8000, PullerImage: "vllm/vllm-openai:v0.11.0", TokenEnv: "HF_TOKEN",
			},
		},
		"InputOverrides": {
			xr: func() map[string]any {
				xr := testXR()
				setPath(xr, "s3://models/llama", "spec", "model", "uri")
				return xr
			},
			in: map[string]any{
				"storage":          map[string]any{"size": "200Gi", "storageClassName": "fast", "accessMode": "ReadWriteMany"},
				"resources":        map[string]any{"cpu": "8", "memory": "32Gi"},
				"gpu":              map[string]any{"resourceName": "amd.com/gpu"},
				"pullBackoffLimit": 6,
				"runtimes":         map[string]any{"vllm": map[string]any{"image": "registry.local/vllm@sha256:abc"}},
				"pullers":          map[string]any{"s3": map[string]any{"image": "registry.local/aws:1", "tokenEnv": "AWS_SESSION_TOKEN"}},
			},
			want: resolved{
				Name: "llama", Namespace: "team-a", Scheme: "s3", Source: "models/llama", Framework: "vllm",
				Min: 1, Max: 1, CPU: "8", Memory: "32Gi", GPU: "1", GPUResource: "amd.com/gpu",
				StorageSize: "200Gi", Class: "fast", Mode: "ReadWriteMany", Backoff: 6,
				Image: "registry.local/vllm@sha256:abc", Port: 8000, PullerImage: "registry.local/aws:1", TokenEnv: "AWS_SESSION_TOKEN",
			},
		},
		"ClaimOverridesInput": {
			xr: func() map[string]any {
				xr := testXR()
				setPath(xr, map[string]any{"cpu": "500m", "memory": "2Gi", "gpu": 0}, "spec", "resources")
				setPath(xr, map[string]any{"size": "10Gi", "storageClassName": "local-path", "accessMode": "ReadWriteMany"}, "spec", "storage")
				setPath(xr, map[string]any{"image": "my/vllm:dev", "port": 9000}, "spec", "serve")
				setPath(xr, map[string]any{"min": 2, "max": 2}, "spec", "replicas")
				return xr
			},
			in: map[string]any{"storage": map[string]any{"size": "200Gi", "storageClassName": "fast"}, "resources": map[string]any{"cpu": "8"}},
			want: resolved{
				Name: "llama", Namespace: "team-a", Scheme: "hf", Source: "meta-llama/Llama-3.1-8B-Instruct", Framework: "vllm",
				Min: 2, Max: 2, CPU: "500m", Memory: "2Gi", GPU: "0", GPUResource: "nvidia.com/gpu",
				StorageSize: "10Gi", Class: "local-path", Mode: "ReadWriteMany", Backoff: 3,
				Image: "my/vllm:dev", Port: 9000, PullerImage: "vllm/vllm-openai:v0.11.0", TokenEnv: "HF_TOKEN",
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, summarize(mustResolve(t, tc.xr(), tc.in))); diff != "" {
				t.Errorf("resolved (-want +got):\n%s", diff)
			}
		})
	}
}

func TestResolveReplicasAndAutoscaling(t *testing.T) {
	type out struct {
		Min, Max    int32
		Autoscaling *resolve.Autoscaling
		Warnings    int
	}
	cases := map[string]struct {
		replicas, autoscaling map[string]any
		framework             string
		want                  out
	}{
		"Defaults":          {want: out{Min: 1, Max: 1}},
		"MinOnly":           {replicas: map[string]any{"min": 3}, want: out{Min: 3, Max: 3, Warnings: 1}},
		"ScaledToZero":      {replicas: map[string]any{"min": 0}, want: out{Min: 0, Max: 1}},
		"MaxWithoutScaling": {replicas: map[string]any{"min": 1, "max": 4}, autoscaling: map[string]any{"enabled": false}, want: out{Min: 1, Max: 4, Warnings: 2}},
		"TargetsWhileDisabled": {
			autoscaling: map[string]any{"enabled": false, "targetCPUUtilization": 50},
			want:        out{Min: 1, Max: 1, Warnings: 1},
		},
		"EnabledNoTarget": {
			replicas: map[string]any{"min": 1, "max": 4}, autoscaling: map[string]any{"enabled": true},
			want: out{Min: 1, Max: 4, Autoscaling: &resolve.Autoscaling{CPUUtilization: ptr.To(int32(80))}, Warnings: 1},
		},
		"CPUTarget": {
			replicas: map[string]any{"min": 2, "max": 4}, autoscaling: map[string]any{"enabled": true, "targetCPUUtilization": 60},
			want: out{Min: 2, Max: 4, Autoscaling: &resolve.Autoscaling{CPUUtilization: ptr.To(int32(60))}, Warnings: 1},
		},
		"ConcurrencyTarget": {
			replicas: map[string]any{"min": 1, "max": 4}, autoscaling: map[string]any{"enabled": true, "targetConcurrency": 10},
			want: out{Min: 1, Max: 4, Autoscaling: &resolve.Autoscaling{Concurrency: ptr.To(int32(10)), Metric: "vllm_num_requests_running"}, Warnings: 1},
		},
		"BothTargetsTGI": {
			framework: "tgi",
			replicas:  map[string]any{"min": 1, "max": 4}, autoscaling: map[string]any{"enabled": true, "targetConcurrency": 3, "targetCPUUtilization": 70},
			want: out{Min: 1, Max: 4, Autoscaling: &resolve.Autoscaling{CPUUtilization: ptr.To(int32(70)), Concurrency: ptr.To(int32(3)), Metric: "tgi_queue_size"}, Warnings: 1},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, "ReadWriteOnce", "spec", "storage", "accessMode")
			if tc.replicas != nil {
				setPath(xr, tc.replicas, "spec", "replicas")
			}
			if tc.autoscaling != nil {
				setPath(xr, tc.autoscaling, "spec", "autoscaling")
			}
			if tc.framework != "" {
				setPath(xr, tc.framework, "spec", "model", "framework")
			}
			s, warnings, err := resolveXR(t, xr, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := out{Min: s.MinReplicas, Max: s.MaxReplicas, Autoscaling: s.Autoscaling, Warnings: len(warnings)}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("replicas (-want +got):\n%s\nwarnings: %q", diff, warnings)
			}
		})
	}
}

// TestModelHash: the weights hash (which names the cache directory) follows
// uri and revision only.
func TestModelHash(t *testing.T) {
	base := mustResolve(t, testXR(), nil).Model.Hash
	cases := map[string]struct {
		edit func(xr map[string]any)
		same bool
	}{
		"Unchanged":        {edit: func(map[string]any) {}, same: true},
		"VersionChanged":   {edit: func(xr map[string]any) { setPath(xr, "7", "spec", "model", "version") }, same: true},
		"FrameworkChanged": {edit: func(xr map[string]any) { setPath(xr, "tgi", "spec", "model", "framework") }, same: true},
		"ReplicasChanged":  {edit: func(xr map[string]any) { setPath(xr, map[string]any{"min": 3}, "spec", "replicas") }, same: true},
		"URIChanged":       {edit: func(xr map[string]any) { setPath(xr, "hf://meta-llama/Llama-3.2-1B", "spec", "model", "uri") }},
		"RevisionSet":      {edit: func(xr map[string]any) { setPath(xr, "main", "spec", "model", "revision") }},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			tc.edit(xr)
			got := mustResolve(t, xr, nil).Model.Hash
			if diff := cmp.Diff(tc.same, got == base); diff != "" {
				t.Errorf("hash %s vs %s: same (-want +got):\n%s", got, base, diff)
			}
			if len(got) != resolve.HashLength {
				t.Errorf("hash %q has %d digits, want %d", got, len(got), resolve.HashLength)
			}
		})
	}
}

func TestParseURI(t *testing.T) {
	type parsed struct{ Scheme, Source, Claim, SubPath string }
	cases := map[string]struct {
		uri  string
		want parsed
	}{
		"HF":            {uri: "hf://meta-llama/Llama-3.1-8B-Instruct", want: parsed{"hf", "meta-llama/Llama-3.1-8B-Instruct", "", ""}},
		"HFNoOrg":       {uri: "hf://gpt2", want: parsed{"hf", "gpt2", "", ""}},
		"S3":            {uri: "s3://bucket/models/llama", want: parsed{"s3", "bucket/models/llama", "", ""}},
		"GS":            {uri: "gs://bucket/llama", want: parsed{"gs", "bucket/llama", "", ""}},
		"HTTPS":         {uri: "https://example.com/m/model.gguf", want: parsed{"https", "example.com/m/model.gguf", "", ""}},
		"HTTP":          {uri: "http://files.local:8080/model.gguf", want: parsed{"http", "files.local:8080/model.gguf", "", ""}},
		"PVCWhole":      {uri: "pvc://shared-models", want: parsed{"pvc", "shared-models", "shared-models", ""}},
		"PVCSubPath":    {uri: "pvc://shared-models/llama/3.1", want: parsed{"pvc", "shared-models/llama/3.1", "shared-models", "llama/3.1"}},
		"PVCTrailSlash": {uri: "pvc://shared-models/llama/", want: parsed{"pvc", "shared-models/llama/", "shared-models", "llama"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := resolve.Model{URI: tc.uri}
			var errs resolve.FieldErrors
			resolve.ParseURI(&m, "spec.model.uri", &errs)
			if err := errs.Err(); err != nil {
				t.Fatalf("parseURI(%q): %v", tc.uri, err)
			}
			if diff := cmp.Diff(tc.want, parsed{m.Scheme, m.Source, m.Claim, m.SubPath}); diff != "" {
				t.Errorf("parseURI(%q) (-want +got):\n%s", tc.uri, diff)
			}
		})
	}
}

// TestNameLengthLimit: the longest accepted claim name still gives a pull
// Job name within 63 characters; one more character is refused.
func TestNameLengthLimit(t *testing.T) {
	cases := map[string]struct {
		length  int
		wantErr bool
	}{
		"AtLimit":   {length: resolve.MaxNameLength},
		"OverLimit": {length: resolve.MaxNameLength + 1, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, "l"+strings.Repeat("a", tc.length-1), "metadata", "labels", resolve.LabelClaimName)
			rsp := run(t, newRequest(t, xr, nil))
			msg := fatalMessage(rsp)
			if diff := cmp.Diff(tc.wantErr, msg != ""); diff != "" {
				t.Fatalf("fatal (-want +got):\n%s\nmessage: %s", diff, msg)
			}
			if tc.wantErr {
				return
			}
			for _, n := range desiredNames(rsp) {
				got := desiredMap(t, rsp, n)["metadata"].(map[string]any)["name"].(string)
				if len(got) > 63 {
					t.Errorf("%s is named %q, %d characters", n, got, len(got))
				}
			}
			job := desiredMap(t, rsp, pullJobResource(t, rsp))["metadata"].(map[string]any)["name"].(string)
			if diff := cmp.Diff(63, len(job)); diff != "" {
				t.Errorf("pull Job name %q length (-want +got):\n%s", job, diff)
			}
		})
	}
}

func TestDecodeXRWrongTypes(t *testing.T) {
	cases := map[string]struct {
		path  []string
		value any
		want  string
	}{
		"MinString":     {path: []string{"spec", "replicas", "min"}, value: "two", want: `spec.replicas.min: must be an integer, not the string "two"`},
		"EnabledString": {path: []string{"spec", "autoscaling", "enabled"}, value: "yes", want: `spec.autoscaling.enabled: must be true or false, not the string "yes"`},
		"ArgsString":    {path: []string{"spec", "serve", "args"}, value: "--x", want: `spec.serve.args: must be a list, not the string "--x"`},
		"URINumber":     {path: []string{"spec", "model", "uri"}, value: 5, want: "spec.model.uri: must be a string, not the number 5"},
		"CPUList":       {path: []string{"spec", "resources", "cpu"}, value: []any{"4"}, want: `spec.resources.cpu: must be a quantity such as "4" or "16Gi", not a list`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, tc.value, tc.path...)
			_, err := resolve.DecodeXR(mustStruct(t, xr))
			got := ""
			if err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("decodeXR error (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFieldErrorsJoined: every bad field is reported at once.
func TestFieldErrorsJoined(t *testing.T) {
	xr := testXR()
	setPath(xr, "pytorch", "spec", "model", "framework")
	setPath(xr, map[string]any{"min": 5, "max": 2}, "spec", "replicas")
	setPath(xr, "ReadOnlyMany", "spec", "storage", "accessMode")
	_, _, err := resolveXR(t, xr, nil)
	if err == nil {
		t.Fatal("resolve accepted three bad fields")
	}
	fields := fieldPattern.FindAllStringSubmatch(err.Error(), -1)
	var got []string
	for _, f := range fields {
		got = append(got, f[2])
	}
	want := []string{"spec.model.framework", "spec.model.framework", "spec.replicas", "spec.storage.accessMode"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields named (-want +got):\n%s\nerror: %v", diff, err)
	}
}

// fieldPattern finds the field paths that start each problem of a joined
// error.
var fieldPattern = regexp.MustCompile(`(^|; )((?:spec|input|metadata)\.[A-Za-z.\[\]0-9]+):`)

func TestResolveGPUWarning(t *testing.T) {
	cases := map[string]struct {
		framework string
		gpu       int
		want      bool
	}{
		"VLLMNoGPU":   {framework: "vllm", gpu: 0, want: true},
		"TGINoGPU":    {framework: "tgi", gpu: 0, want: true},
		"TritonNoGPU": {framework: "triton", gpu: 0, want: true},
		"VLLMWithGPU": {framework: "vllm", gpu: 1},
		"FakeNoGPU":   {framework: "fake", gpu: 0},
		"LlamaCPPCPU": {framework: "llamacpp", gpu: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, tc.framework, "spec", "model", "framework")
			setPath(xr, tc.gpu, "spec", "resources", "gpu")
			_, warnings, err := resolveXR(t, xr, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Contains(strings.Join(warnings, "\n"), "spec.resources.gpu")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("GPU warning (-want +got):\n%s\nwarnings: %q", diff, warnings)
			}
		})
	}
}

// TestApplyServeMergesEnv: a claim's variable replaces the preset's of the
// same name in place; its others follow the preset's.
func TestApplyServeMergesEnv(t *testing.T) {
	xr := testXR()
	setPath(xr, "ollama", "spec", "model", "framework")
	setPath(xr, map[string]any{"env": []any{
		map[string]any{"name": "OLLAMA_KEEP_ALIVE", "value": "5m"},
		map[string]any{"name": "EXTRA", "value": "1"},
	}}, "spec", "serve")
	s := mustResolve(t, xr, nil)
	want := []corev1.EnvVar{
		{Name: "OLLAMA_KEEP_ALIVE", Value: "5m"},
		{Name: "NUM_THREAD", ValueFrom: &corev1.EnvVarSource{
			ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu", Divisor: resource.MustParse("1")},
		}},
		{Name: "EXTRA", Value: "1"},
	}
	if diff := cmp.Diff(want, s.Runtime.Env); diff != "" {
		t.Errorf("runtime env (-want +got):\n%s", diff)
	}
}

// TestServePortBlamesTheClaim: a bad spec.serve.port is the claim's
// mistake, not the platform Input's.
func TestServePortBlamesTheClaim(t *testing.T) {
	xr := testXR()
	setPath(xr, 70000, "spec", "serve", "port")
	_, _, err := resolveXR(t, xr, nil)
	if err == nil {
		t.Fatal("resolve accepted port 70000")
	}
	want := "spec.serve.port: 70000 is out of range; use a port from 1 to 65535"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

// TestAutoscalerWithoutHeadroomWarns: an autoscaler whose max equals its
// min can never scale, which the claim's author should hear about.
func TestAutoscalerWithoutHeadroomWarns(t *testing.T) {
	for name, tc := range map[string]struct {
		replicas map[string]any
		want     bool
	}{
		"MaxUnset":  {replicas: map[string]any{"min": 2}, want: true},
		"MaxEqual":  {replicas: map[string]any{"min": 2, "max": 2}, want: true},
		"Headroom":  {replicas: map[string]any{"min": 1, "max": 3}, want: false},
		"Defaulted": {replicas: nil, want: true},
	} {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			setPath(xr, map[string]any{"enabled": true}, "spec", "autoscaling")
			if tc.replicas != nil {
				setPath(xr, tc.replicas, "spec", "replicas")
			}
			_, warnings, err := resolveXR(t, xr, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := false
			for _, w := range warnings {
				if strings.HasPrefix(w, "spec.replicas.max: the autoscaler cannot scale") {
					got = true
				}
			}
			if got != tc.want {
				t.Errorf("warned = %v, want %v (warnings: %q)", got, tc.want, warnings)
			}
		})
	}
}
