package invariants

import (
	"flag"
	"fmt"
	"math/rand"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/quick"
)

// Random claims under random Inputs, fed to the same checks. The claims
// are valid as the schema sees them; the function may still refuse some
// (a policy, a framework without adapters), which is fine and counted.

var (
	seed  = flag.Int64("invariants.seed", 20, "seed of the random claims and Inputs")
	cases = flag.Int("invariants.cases", 200, "how many random claims and Inputs to check (a quarter under -race)")
)

// scenario is a claim (its XR) and an Input.
type scenario struct {
	XR, Input map[string]any
}

// Generate makes scenario a testing/quick generator.
func (scenario) Generate(r *rand.Rand, _ int) reflect.Value {
	return reflect.ValueOf(randomScenario(r))
}

func pick[T any](r *rand.Rand, list ...T) T { return list[r.Intn(len(list))] }

func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// Sources the claims pull from, by scheme.
var sources = map[string][]string{
	"hf":    {"hf://meta-llama/Llama-3.1-8B-Instruct", "hf://acme/chat-7b", "hf://Qwen/Qwen2.5-0.5B-Instruct"},
	"s3":    {"s3://team-models/llama", "s3://other-bucket/llama"},
	"gs":    {"gs://team-models/ollama/llama3.2"},
	"https": {"https://a.models.internal/qwen.gguf", "https://models.example.com/qwen.gguf"},
	"pvc":   {"pvc://shared-models/tiny"},
	"oci":   {"oci://registry.example.com/models/llama:1", "oci://evil.example.com/models/llama:1"},
}

var adapterSources = []string{"hf://meta-llama/sql-lora", "hf://acme/support-lora", "s3://team-models/lora-a", "https://a.models.internal/lora.safetensors"}

func randomURI(r *rand.Rand) string {
	scheme := pick(r, "hf", "hf", "hf", "s3", "gs", "https", "pvc", "oci")
	return pick(r, sources[scheme]...)
}

// randomScenario draws a claim and an Input.
func randomScenario(r *rand.Rand) scenario {
	fw := pick(r, "vllm", "vllm", "vllm", "tgi", "triton", "llamacpp", "ollama", "fake")
	gpus := fw == "vllm" || fw == "tgi" || fw == "triton"
	model := map[string]any{"uri": randomURI(r), "framework": fw, "version": "1"}
	if chance(r, 0.3) {
		model["credentialsSecretRef"] = map[string]any{"name": "creds", "key": "TOKEN"}
	}
	spec := map[string]any{"model": model, "resources": map[string]any{"cpu": "2", "memory": "8Gi"}}
	if gpus {
		setPath(spec, int64(1), "resources", "gpu")
	}
	min := int64(1 + r.Intn(3))
	spec["replicas"] = map[string]any{"min": min}
	switch {
	case chance(r, 0.2):
		spec["replicas"] = map[string]any{"min": int64(0), "max": int64(2)}
		spec["autoscaling"] = map[string]any{"enabled": true, "targetConcurrency": int64(8)}
	case chance(r, 0.25):
		spec["replicas"] = map[string]any{"min": min, "max": min + 2}
		spec["autoscaling"] = map[string]any{"enabled": true, "targetCPUUtilization": int64(80)}
	}
	spec["storage"] = map[string]any{"size": pick(r, "10Gi", "40Gi", "900Gi"), "accessMode": pick(r, "ReadWriteOnce", "ReadWriteMany")}
	switch {
	case fw == "vllm" && chance(r, 0.3):
		var adapters []any
		for i := range 1 + r.Intn(3) {
			a := map[string]any{"name": fmt.Sprintf("lora-%d", i), "uri": adapterSources[(i+r.Intn(len(adapterSources)))%len(adapterSources)]}
			if chance(r, 0.3) {
				a["credentialsSecretRef"] = map[string]any{"name": "adapter-creds", "key": "TOKEN"}
			}
			adapters = append(adapters, a)
		}
		spec["adapters"] = adapters
	case chance(r, 0.2):
		spec["traffic"] = []any{
			map[string]any{"version": "1", "weight": int64(90)},
			map[string]any{"version": "2", "weight": int64(10), "uri": randomURI(r)},
		}
	case fw == "vllm" && chance(r, 0.15):
		spec["nodes"] = int64(2)
		spec["parallelism"] = map[string]any{"tensor": int64(1), "pipeline": int64(2)}
		delete(spec, "autoscaling")
		spec["replicas"] = map[string]any{"min": min}
		setPath(spec, "ReadWriteMany", "storage", "accessMode")
	}
	xr := map[string]any{
		"apiVersion": "inference.inferno.io/v1alpha1", "kind": "XInferenceService",
		"metadata": map[string]any{"name": "gen-x1y2z", "labels": map[string]any{"crossplane.io/claim-name": "gen", "crossplane.io/claim-namespace": "team-g"}},
		"spec":     spec,
	}
	return scenario{XR: xr, Input: randomInput(r)}
}

// randomInput draws an Input: each feature on or off, its namespaces and
// a policy drawn from the claims' own sources, so that some claims pass it
// and some do not.
func randomInput(r *rand.Rand) map[string]any {
	in := map[string]any{"apiVersion": "fn.inferno.io/v1beta1", "kind": "Input"}
	if chance(r, 0.5) {
		in["pullProgress"] = map[string]any{"enabled": true}
	}
	if chance(r, 0.5) {
		np := map[string]any{"enabled": true}
		if chance(r, 0.6) {
			np["gatewayNamespace"] = pick(r, "gateways", "istio-system")
		}
		if chance(r, 0.6) {
			np["metricsNamespace"] = "monitoring"
		}
		if chance(r, 0.3) {
			np["dnsNamespace"] = "dns"
		}
		if chance(r, 0.4) {
			np["egress"] = []any{
				map[string]any{"namespace": "tracing", "ports": []any{map[string]any{"port": 4317}}},
				map[string]any{"cidr": "10.0.0.0/8", "except": []any{"10.96.0.0/12"}, "ports": []any{map[string]any{"port": 8125, "protocol": "UDP"}}},
			}
		}
		in["networkPolicy"] = np
	}
	if chance(r, 0.4) {
		k := map[string]any{"enabled": true, "prometheusAddress": "http://prometheus.monitoring.svc:9090"}
		if chance(r, 0.5) {
			k["httpAddOn"] = map[string]any{"enabled": true}
		}
		in["keda"] = k
	}
	if chance(r, 0.4) {
		setPath(in, true, "monitoring", "podMonitor", "enabled")
	}
	if chance(r, 0.4) {
		gw := map[string]any{"name": "inference"}
		if chance(r, 0.7) {
			gw["namespace"] = "gateways"
		}
		// Without a domain every claim is refused (routes without
		// hostnames would match each other's requests).
		if chance(r, 0.9) {
			gw["domain"] = pick(r, "models.example.com", "example.com")
		}
		if chance(r, 0.6) {
			gw["inferenceExtension"] = map[string]any{"enabled": true}
		}
		setPath(in, gw, "traffic", "gateway")
	}
	if chance(r, 0.3) {
		in["scheduling"] = map[string]any{"nodeSelector": map[string]any{"pool": "inference"}}
	}
	if chance(r, 0.4) {
		in["oci"] = map[string]any{"mode": "ImageVolume"}
	}
	if chance(r, 0.2) {
		in["serverServiceAccount"] = map[string]any{"name": "model-servers"}
	}
	if chance(r, 0.5) {
		p := map[string]any{}
		if chance(r, 0.5) {
			var schemes []any
			for _, s := range []string{"hf", "s3", "gs", "https", "oci"} {
				if chance(r, 0.7) {
					schemes = append(schemes, s)
				}
			}
			if schemes != nil {
				p["allowedURISchemes"] = schemes
			}
		}
		if chance(r, 0.6) {
			p["allowedURIHosts"] = []any{"hf://meta-llama", "hf://Qwen", "s3://team-models", "https://*.models.internal", "oci://registry.example.com",
				pick[any](r, "gs://team-models", "hf://*")}
		}
		if chance(r, 0.4) {
			p["allowPVCURIs"] = false
		}
		if chance(r, 0.4) {
			p["allowedStorageClasses"] = []any{"fast-rwx"}
			in["storage"] = map[string]any{"storageClassName": "fast-rwx"}
		}
		if chance(r, 0.3) {
			p["maxStorageSize"] = "500Gi"
		}
		in["policy"] = p
	}
	// Drawn last, so the draws above stay those of the seeds before it.
	if chance(r, 0.3) {
		in["gpu"] = map[string]any{"dra": map[string]any{
			"deviceClassName": "gpu.example.com",
			"selectors":       []any{`device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0`},
			"types":           map[string]any{"h100": map[string]any{"selectors": []any{`device.attributes["gpu.example.com"].model == "H100"`}}},
		}}
	}
	return in
}

// TestGenerated checks every invariant on random claims and Inputs at
// every stage. The seed is fixed (-invariants.seed) so a run is
// repeatable, and printed on a failure.
func TestGenerated(t *testing.T) {
	n := *cases
	if raceEnabled && !*fullMatrix {
		n = max(1, n/4)
	}
	var tried, rendered, index atomic.Int64
	property := func(sc scenario) bool {
		i := index.Add(1)
		tried.Add(1)
		var f failures
		walked, err := walkExample(example{XR: sc.XR, Input: sc.Input}, sc.Input)
		if err == nil {
			err = checkRenders(walked, sc.XR, sc.Input, func(string) map[string]any { return nil }, fmt.Sprintf("case %d", i), &f)
		}
		if err != nil {
			t.Errorf("seed %d, case %d: %v", *seed, i, err)
			return false
		}
		if len(walked) > 1 {
			rendered.Add(1)
		}
		if len(f.groups) == 0 {
			return true
		}
		var msgs []string
		for k, g := range f.groups {
			msgs = append(msgs, k+"\n    "+strings.Join(g.Examples, "\n    "))
		}
		t.Errorf("seed %d, case %d (rerun: go test ./test/invariants -run TestGenerated -invariants.seed %d):\n%s\nclaim spec:\n%s\nInput:\n%s",
			*seed, i, *seed, strings.Join(msgs, "\n"), yamlOf(sc.XR["spec"]), yamlOf(sc.Input))
		return false
	}
	err := quick.Check(property, &quick.Config{MaxCount: n, Rand: rand.New(rand.NewSource(*seed))})
	if _, ok := err.(*quick.CheckError); err != nil && !ok {
		t.Fatal(err)
	}
	t.Logf("seed %d: %d random claims, %d rendered (the rest refused)", *seed, tried.Load(), rendered.Load())
	if rendered.Load()*4 < tried.Load() {
		t.Errorf("seed %d: only %d of %d random claims rendered: the generator draws mostly refused claims", *seed, rendered.Load(), tried.Load())
	}
}
