package fn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/api/resource"
)

// TestPolicyDefaultsKeepBehaviour: an Input whose policy sets nothing
// renders every example exactly as no policy does.
func TestPolicyDefaultsKeepBehaviour(t *testing.T) {
	examples, err := filepath.Glob("../examples/frameworks/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	examples = append(examples, "../examples/xr.yaml", "../examples/canary/xr.yaml", namespacedXR, cacheXRPath, onCacheXRPath)
	for _, path := range examples {
		t.Run(filepath.Base(filepath.Dir(path))+"/"+filepath.Base(path), func(t *testing.T) {
			xr := readYAML(t, path)
			want := run(t, newRequest(t, xr, map[string]any{}))
			got := run(t, newRequest(t, xr, map[string]any{"policy": map[string]any{}}))
			if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
				t.Errorf("an empty policy changes the response (-none +empty):\n%s", diff)
			}
		})
	}
}

// TestPolicyAtTheLimit: a claim exactly at every limit is served.
func TestPolicyAtTheLimit(t *testing.T) {
	xr := testXR()
	setPath(xr, map[string]any{"cpu": "8", "memory": "64Gi", "gpu": 2}, "spec", "resources")
	setPath(xr, map[string]any{"min": 1, "max": 4}, "spec", "replicas")
	setPath(xr, map[string]any{"enabled": true}, "spec", "autoscaling")
	setPath(xr, map[string]any{"size": "100Gi", "storageClassName": "fast"}, "spec", "storage")
	setPath(xr, "registry.internal/vllm:1", "spec", "serve", "image")
	in := map[string]any{"policy": map[string]any{
		"maxGPUsPerClaim": 8, "maxReplicas": 4, "maxCPUPerServer": "8", "maxMemoryPerServer": "64Gi",
		"maxStorageSize": "100Gi", "allowedStorageClasses": []any{"fast"}, "allowedServerImages": []any{"registry.internal/"},
		"allowedURISchemes": []any{"hf"}, "allowedURIHosts": []any{"hf://meta-llama"},
		"allowEnvValueFrom": false, "allowPVCURIs": false,
	}}
	if msg := fatalMessage(run(t, newRequest(t, xr, in))); msg != "" {
		t.Errorf("a claim at every limit is refused: %s", msg)
	}
}

func TestSourceAllowed(t *testing.T) {
	cases := map[string]struct {
		uri     string
		entries []string
		want    bool
	}{
		"ExactOrganisation":  {uri: "hf://meta-llama/Llama-3.1-8B", entries: []string{"hf://meta-llama"}, want: true},
		"CaseInsensitive":    {uri: "hf://Meta-Llama/Llama-3.1-8B", entries: []string{"hf://meta-llama"}, want: true},
		"OtherOrganisation":  {uri: "hf://evil/llama", entries: []string{"hf://meta-llama"}},
		"AnyOfScheme":        {uri: "hf://evil/llama", entries: []string{"hf://*"}, want: true},
		"OtherScheme":        {uri: "s3://meta-llama/x", entries: []string{"hf://meta-llama"}},
		"Bucket":             {uri: "s3://models/llama", entries: []string{"s3://models"}, want: true},
		"Subdomain":          {uri: "https://eu.models.internal/m.gguf", entries: []string{"https://*.models.internal"}, want: true},
		"SubdomainNotApex":   {uri: "https://models.internal/m.gguf", entries: []string{"https://*.models.internal"}},
		"SubdomainLookalike": {uri: "https://evilmodels.internal/m.gguf", entries: []string{"https://*.models.internal"}},
		"SubdomainSuffix":    {uri: "https://models.internal.evil.com/m.gguf", entries: []string{"https://*.models.internal"}},
		"PortMustMatch":      {uri: "https://eu.models.internal:8443/m.gguf", entries: []string{"https://*.models.internal"}},
		"PortListed":         {uri: "https://eu.models.internal:8443/m.gguf", entries: []string{"https://*.models.internal:8443"}, want: true},
		"ExactHostPort":      {uri: "http://mirror:8080/m.gguf", entries: []string{"http://mirror:8080"}, want: true},
		"ExactHostOtherPort": {uri: "http://mirror:9090/m.gguf", entries: []string{"http://mirror:8080"}},
		// Hosts compared as hosts: case, a trailing dot and the default
		// port never change which host matches; query and fragment end it.
		"HostCase":          {uri: "https://EU.Models.Internal/m.gguf", entries: []string{"https://*.models.internal"}, want: true},
		"HostTrailingDot":   {uri: "https://eu.models.internal./m.gguf", entries: []string{"https://*.models.internal"}, want: true},
		"DefaultPort":       {uri: "https://eu.models.internal:443/m.gguf", entries: []string{"https://*.models.internal"}, want: true},
		"DefaultPortListed": {uri: "http://mirror/m.gguf", entries: []string{"http://mirror:80"}, want: true},
		"EntryCase":         {uri: "https://eu.models.internal/m.gguf", entries: []string{"https://*.Models.Internal."}, want: true},
		"QueryEndsHost":     {uri: "https://evil.com?.models.internal/m.gguf", entries: []string{"https://*.models.internal"}},
		"FragmentEndsHost":  {uri: "https://evil.com#.models.internal/m.gguf", entries: []string{"https://*.models.internal"}},
		"IPNotWildcard":     {uri: "http://10.0.0.1/m.gguf", entries: []string{"http://*.0.0.1"}},
		"IPSpelling":        {uri: "http://[0:0::1]:8080/m.gguf", entries: []string{"http://[::1]:8080"}, want: true},
		"OrganisationCase":  {uri: "hf://Meta-Llama/x", entries: []string{"hf://meta-llama"}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m := resolve.Model{URI: tc.uri}
			var errs resolve.FieldErrors
			resolve.ParseURI(&m, "uri", &errs)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if diff := cmp.Diff(tc.want, resolve.SourceAllowed(m, tc.entries)); diff != "" {
				t.Errorf("sourceAllowed(%s, %v) (-want +got):\n%s", tc.uri, tc.entries, diff)
			}
		})
	}
}

// TestDeniedArg: a denied flag is found in each spelling a runtime reads,
// and nothing else is.
func TestDeniedArg(t *testing.T) {
	trust := []string{"--trust-remote-code"}
	cases := map[string]struct {
		arg    string
		denied []string
		want   bool
	}{
		"Flag":          {arg: "--trust-remote-code", denied: trust, want: true},
		"Value":         {arg: "--trust-remote-code=True", denied: trust, want: true},
		"Underscore":    {arg: "--trust_remote_code", denied: trust, want: true},
		"Abbreviated":   {arg: "--trust", denied: trust, want: true},
		"ScriptWord":    {arg: `exec vllm serve "$MODEL_DIR" '--trust-remote-code'`, denied: trust, want: true},
		"Other":         {arg: "--max-model-len=4096", denied: trust},
		"ValueMentions": {arg: "--served-model-name=trust-remote-code", denied: trust},
		"EndOfOptions":  {arg: "--", denied: trust},
		"ShortPrefix":   {arg: "--t", denied: trust},
		"Empty":         {arg: "--trust-remote-code", denied: []string{}},
		"Every":         {arg: "--port=8000", denied: []string{"*"}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if _, got := resolve.DeniedArg(tc.arg, tc.denied); got != tc.want {
				t.Errorf("DeniedArg(%q, %q) = %v, want %v", tc.arg, tc.denied, got, tc.want)
			}
		})
	}
}

func TestImageAllowed(t *testing.T) {
	cases := map[string]struct {
		image, prefix string
		want          bool
	}{
		"Registry":          {image: "registry.internal/vllm:1", prefix: "registry.internal/", want: true},
		"RegistryLookalike": {image: "registry.internal.evil.com/vllm:1", prefix: "registry.internal/"},
		"RepositoryTag":     {image: "docker.io/vllm/vllm-openai:v0.11.0", prefix: "docker.io/vllm/vllm-openai", want: true},
		"RepositoryDigest":  {image: "docker.io/vllm/vllm-openai@sha256:abc", prefix: "docker.io/vllm/vllm-openai", want: true},
		"RepositoryExact":   {image: "docker.io/vllm/vllm-openai", prefix: "docker.io/vllm/vllm-openai", want: true},
		"LongerRepository":  {image: "docker.io/vllm/vllm-openai-evil:1", prefix: "docker.io/vllm/vllm-openai"},
		"RegistryNoSlash":   {image: "registry.internal.evil.com/x", prefix: "registry.internal"},
		"PinnedTag":         {image: "vllm/vllm-openai:v0.11.0", prefix: "vllm/vllm-openai:", want: true},
		"Elsewhere":         {image: "evil/miner", prefix: "registry.internal/"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resolve.ImageAllowed(tc.image, []string{tc.prefix})); diff != "" {
				t.Errorf("imageAllowed(%q, %q) (-want +got):\n%s", tc.image, tc.prefix, diff)
			}
		})
	}
}

// The locked-down example: a Composition whose Input sets every guardrail.
const lockedDownDir = "../examples/locked-down"

// lockedDownInput is the Input of examples/locked-down/composition.yaml.
func lockedDownInput(t testing.TB) map[string]any {
	t.Helper()
	comp := readYAML(t, filepath.Join(lockedDownDir, "composition.yaml"))
	steps, _ := nested(comp, "spec", "pipeline")
	in, _ := steps.([]any)[0].(map[string]any)["input"].(map[string]any)
	return in
}

// TestLockedDownGolden renders the locked-down example's claim fresh and
// serving (routed, every policy in place) and its refused claim, and
// compares them with fn/testdata/golden/locked-down-*.yaml. With -update
// it rewrites them and examples/locked-down/observed/serving.yaml.
func TestLockedDownGolden(t *testing.T) {
	in := lockedDownInput(t)
	xr := readYAML(t, filepath.Join(lockedDownDir, "xr.yaml"))
	t.Run("fresh", func(t *testing.T) {
		rsp := run(t, newRequest(t, xr, in))
		if msg := fatalMessage(rsp); msg != "" {
			t.Fatalf("the locked-down example is refused: %s", msg)
		}
		compareGolden(t, "locked-down-fresh", rsp)
	})
	t.Run("serving", func(t *testing.T) {
		_, obs := settle(t, xr, in, world{RouteState: "accepted"}, nil)
		fixture := filepath.Join(lockedDownDir, "observed", "serving.yaml")
		if *update {
			writeObserved(t, fixture, "examples/locked-down/xr.yaml", "serving", obs)
		}
		rsp := run(t, newRequest(t, xr, in, readObserved(t, fixture)...))
		if st := statusOf(rsp); st["phase"] != "Serving" {
			t.Errorf("phase %v, want Serving: %v", st["phase"], st["message"])
		}
		compareGolden(t, "locked-down-serving", rsp)
	})
	t.Run("refused", func(t *testing.T) {
		rsp := run(t, newRequest(t, readYAML(t, filepath.Join(lockedDownDir, "refused.yaml")), in))
		msg := fatalMessage(rsp)
		for _, field := range []string{"spec.serve.image:", "spec.serve.env[0].valueFrom:", "spec.traffic[1].credentialsSecretRef:", "spec.traffic[1].uri:", "spec.resources.gpu:", "spec.storage.storageClassName:"} {
			if !strings.Contains(msg, field) {
				t.Errorf("the refusal does not name %s: %s", field, msg)
			}
		}
		compareGolden(t, "locked-down-refused", rsp)
	})
}

// lockedDownCacheInput is the Input of
// examples/locked-down/modelcache-composition.yaml.
func lockedDownCacheInput(t testing.TB) map[string]any {
	t.Helper()
	comp := readYAML(t, filepath.Join(lockedDownDir, "modelcache-composition.yaml"))
	if kind, _ := nested(comp, "spec", "compositeTypeRef", "kind"); kind != "XModelCache" {
		t.Fatalf("modelcache-composition.yaml composes %v, want XModelCache", kind)
	}
	steps, _ := nested(comp, "spec", "pipeline")
	in, _ := steps.([]any)[0].(map[string]any)["input"].(map[string]any)
	return in
}

// TestLockedDownCachesShareThePolicy: the locked-down example's ModelCache
// Composition takes the very Input of its InferenceService Composition, so
// one policy holds for every weights source of the platform.
func TestLockedDownCachesShareThePolicy(t *testing.T) {
	if diff := cmp.Diff(lockedDownInput(t), lockedDownCacheInput(t)); diff != "" {
		t.Errorf("the locked-down ModelCache Composition's Input differs from the InferenceService Composition's (-service +cache):\n%s", diff)
	}
}

// TestLockedDownAdmissionNamesTheCompositions: the admission policy that
// keeps claims to the platform's Composition names the locked-down
// example's own Compositions (the e2e's tenancy scenario enforces it on
// the real API server), so renaming one cannot leave claims free to
// choose, or unable to compose.
func TestLockedDownAdmissionNamesTheCompositions(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(lockedDownDir, "admission-policy.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	policy := string(b)
	for _, file := range []string{"composition.yaml", "modelcache-composition.yaml"} {
		name, _ := nested(readYAML(t, filepath.Join(lockedDownDir, file)), "metadata", "name")
		if n, _ := name.(string); n == "" || !strings.Contains(policy, "'"+n+"'") {
			t.Errorf("admission-policy.yaml does not name %s's Composition %v", file, name)
		}
	}
}

// TestLockedDownCacheGolden renders the locked-down ModelCache example
// fresh, its refused cache, and the example service on a cache that the
// locked-down policy refuses (composed elsewhere, Ready), comparing with
// fn/testdata/golden/locked-down-modelcache-*.yaml.
func TestLockedDownCacheGolden(t *testing.T) {
	cacheIn := lockedDownCacheInput(t)
	t.Run("fresh", func(t *testing.T) {
		rsp := run(t, newRequest(t, readYAML(t, filepath.Join(lockedDownDir, "modelcache-xr.yaml")), cacheIn))
		if msg := fatalMessage(rsp); msg != "" {
			t.Fatalf("the locked-down ModelCache example is refused: %s", msg)
		}
		compareGolden(t, "locked-down-modelcache-fresh", rsp)
	})
	t.Run("refused", func(t *testing.T) {
		rsp := run(t, newRequest(t, readYAML(t, filepath.Join(lockedDownDir, "modelcache-refused.yaml")), cacheIn))
		msg := fatalMessage(rsp)
		for _, want := range []string{"spec.uri:", "input.policy.allowedURIHosts", "spec.storage.size:", "input.policy.maxStorageSize", "spec.storage.storageClassName:", "input.policy.allowedStorageClasses"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the refusal does not name %s: %s", want, msg)
			}
		}
		compareGolden(t, "locked-down-modelcache-refused", rsp)
	})
	t.Run("service-on-refused-cache", func(t *testing.T) {
		elsewhere := readYAML(t, filepath.Join(lockedDownDir, "required", "cache-elsewhere.yaml"))
		rsp := run(t, withRequired(t, newRequest(t, readYAML(t, onCacheXRPath), lockedDownInput(t)), elsewhere))
		msg := fatalMessage(rsp)
		for _, want := range []string{"spec.model.cacheRef: ModelCache llama-3-1-8b", "uri hf://someone-else/Llama-3.1-8B-Instruct", "input.policy.allowedURIHosts", "input.policy.maxStorageSize", "input.policy.allowedStorageClasses"} {
			if !strings.Contains(msg, want) {
				t.Errorf("the refusal does not name %q: %s", want, msg)
			}
		}
		if got := rsp.GetRequirements().GetResources()[observe.RequirementCache]; got == nil {
			t.Error("a refused service stops asking for its ModelCache: Crossplane would never settle")
		}
		compareGolden(t, "locked-down-modelcache-service-refused", rsp)
	})
}

// TestCacheRefused holds resolve.CacheRefused to every check a weights
// source goes through, with the service's Input: each finding is a
// refusal at spec.model.cacheRef naming the cache, the cache's field, the
// platform's setting; a cache within the policy, or no policy, passes.
func TestCacheRefused(t *testing.T) {
	q := func(s string) *resource.Quantity { v := resource.MustParse(s); return &v }
	str := func(s string) *string { return &s }
	allowed := v1alpha1.ModelCacheSpec{URI: "hf://meta-llama/Llama-3.1-8B-Instruct", Storage: &v1alpha1.CacheStorageSpec{Size: q("40Gi")}}
	policy := &v1beta1.Input{
		Storage: &v1beta1.StorageDefaults{StorageClassName: "fast"},
		Policy: &v1beta1.Policy{
			AllowedURISchemes: []string{"hf", "https", "http"}, AllowedURIHosts: []string{"hf://meta-llama", "https://*.models.internal", "http://mirror.internal"},
			MaxStorageSize: q("100Gi"), AllowedStorageClasses: []string{"fast"},
		},
	}
	with := func(edit func(*v1alpha1.ModelCacheSpec)) v1alpha1.ModelCacheSpec {
		s := *allowed.DeepCopy()
		edit(&s)
		return s
	}
	cases := map[string]struct {
		spec v1alpha1.ModelCacheSpec
		in   *v1beta1.Input
		want []string // fragments of the refusal; none: allowed
	}{
		"Allowed":         {spec: allowed, in: policy},
		"NoPolicy":        {spec: with(func(s *v1alpha1.ModelCacheSpec) { s.URI = "hf://anyone/x" }), in: &v1beta1.Input{}},
		"Scheme":          {spec: with(func(s *v1alpha1.ModelCacheSpec) { s.URI = "s3://models/llama" }), in: policy, want: []string{"its spec.uri: s3:// is not among the schemes", "input.policy.allowedURISchemes"}},
		"Host":            {spec: with(func(s *v1alpha1.ModelCacheSpec) { s.URI = "hf://evil/llama" }), in: policy, want: []string{"its spec.uri: hf://evil is not among the sources", "input.policy.allowedURIHosts"}},
		"HostWildcard":    {spec: with(func(s *v1alpha1.ModelCacheSpec) { s.URI = "https://evilmodels.internal/m.gguf" }), in: policy, want: []string{"input.policy.allowedURIHosts"}},
		"StorageSize":     {spec: with(func(s *v1alpha1.ModelCacheSpec) { s.Storage.Size = q("2Ti") }), in: policy, want: []string{"its spec.storage.size: 2Ti is over the limit", "input.policy.maxStorageSize"}},
		"StorageClass":    {spec: with(func(s *v1alpha1.ModelCacheSpec) { s.Storage.StorageClassName = str("slow") }), in: policy, want: []string{`its spec.storage.storageClassName: "slow"`, "input.policy.allowedStorageClasses"}},
		"DefaultClass":    {spec: allowed, in: &v1beta1.Input{Policy: policy.Policy}, want: []string{"its spec.storage.storageClassName: is not set", "input.policy.allowedStorageClasses"}},
		"DefaultSizeOver": {spec: v1alpha1.ModelCacheSpec{URI: allowed.URI}, in: &v1beta1.Input{Storage: &v1beta1.StorageDefaults{Size: q("1Ti"), StorageClassName: "fast"}, Policy: policy.Policy}, want: []string{"its input.storage.size: 1Ti", "input.policy.maxStorageSize"}},
		"CredentialsInClearText": {spec: with(func(s *v1alpha1.ModelCacheSpec) {
			s.URI, s.CredentialsSecretRef = "http://mirror.internal/m.gguf", &v1alpha1.SecretKeyReference{Name: "mirror"}
		}), in: policy, want: []string{"its spec.credentialsSecretRef: would send Secret mirror to mirror.internal in clear text", "input.policy.plainHTTPCredentialHosts"}},
		"PVC":        {spec: with(func(s *v1alpha1.ModelCacheSpec) { s.URI = "pvc://shared/llama" }), in: policy, want: []string{"pvc:// weights are never cached"}},
		"NotAURI":    {spec: with(func(s *v1alpha1.ModelCacheSpec) { s.URI = "ftp://x/y" }), in: policy, want: []string{`its spec.uri: scheme "ftp" is not supported`}},
		"Everything": {spec: with(func(s *v1alpha1.ModelCacheSpec) { s.URI, s.Storage.Size = "hf://evil/x", q("2Ti") }), in: policy, want: []string{"its spec.uri: hf://evil", "allowedURIHosts", "; its spec.storage.size: 2Ti", "maxStorageSize"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := resolve.CacheRefused("llama", tc.spec, tc.in)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("allowed, want refused")
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "spec.model.cacheRef: ModelCache llama (uri "+tc.spec.URI) || !strings.Contains(msg, "serve a ModelCache that the platform allows") {
				t.Errorf("the refusal does not name the field, the cache and its source, and the fix: %s", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("the refusal does not say %q: %s", w, msg)
				}
			}
		})
	}
}
