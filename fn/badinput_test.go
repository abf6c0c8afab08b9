package fn

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"google.golang.org/protobuf/proto"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// TestBadInput is the catalogue of inputs the function refuses: each is an
// XR (testXR with one mutation) and/or an Input, the field path the Fatal
// message must name, and the fix it must suggest. A Fatal result targets
// the composite and the claim, and no composed resource is returned.
func TestBadInput(t *testing.T) {
	set := func(value any, path ...string) func(map[string]any) {
		return func(xr map[string]any) { setPath(xr, value, path...) }
	}
	model := func(field string, value any) func(map[string]any) { return set(value, "spec", "model", field) }
	// scaleToZero asks for scale to zero; kedaOn is an Input that allows it.
	scaleToZero := func(xr map[string]any) {
		setPath(xr, map[string]any{"min": 0, "max": 3}, "spec", "replicas")
		setPath(xr, map[string]any{"enabled": true, "targetConcurrency": 4}, "spec", "autoscaling")
	}
	kedaOn := map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090"}}
	// egress is an Input whose servers' NetworkPolicy admits these egress
	// entries.
	egress := func(entries ...any) map[string]any {
		return map[string]any{"networkPolicy": map[string]any{"enabled": true, "egress": entries}}
	}
	port := func(n int, proto string) map[string]any {
		p := map[string]any{"port": n}
		if proto != "" {
			p["protocol"] = proto
		}
		return p
	}
	both := func(edits ...func(map[string]any)) func(map[string]any) {
		return func(xr map[string]any) {
			for _, e := range edits {
				e(xr)
			}
		}
	}
	// onlyPresets is an Input that turns the built-in presets off and
	// describes the vllm runtime and the hf puller in full, less what a
	// case leaves out.
	onlyPresets := func(runtime, puller map[string]any) map[string]any {
		rt := map[string]any{"image": "registry.local/vllm:1", "port": 8000, "healthPath": "/health", "startupSeconds": 600}
		for k, v := range runtime {
			if v == nil {
				delete(rt, k)
			} else {
				rt[k] = v
			}
		}
		p := map[string]any{"image": "registry.local/hf:1", "command": []any{"/bin/sh", "-c", "true"}}
		for k, v := range puller {
			if v == nil {
				delete(p, k)
			} else {
				p[k] = v
			}
		}
		return map[string]any{"builtinPresets": false, "runtimes": map[string]any{"vllm": rt}, "pullers": map[string]any{"hf": p}}
	}
	// dra is an Input asking for GPUs through DRA with these settings;
	// draInput offers two GPU types.
	dra := func(settings map[string]any) map[string]any {
		return map[string]any{"gpu": map[string]any{"dra": settings}}
	}
	draInput := dra(map[string]any{"deviceClassName": "gpu.example.com", "types": map[string]any{
		"h100": map[string]any{"selectors": []any{`device.attributes["gpu.example.com"].model == "H100"`}},
		"a100": map[string]any{"selectors": []any{`device.attributes["gpu.example.com"].model == "A100"`}},
	}})
	long := "l" + strings.Repeat("o", resolve.MaxNameLength) // maxNameLength+1 characters
	// adapters sets spec.adapters to entries; ad is one of them.
	adapters := func(entries ...map[string]any) func(map[string]any) {
		return func(xr map[string]any) {
			list := make([]any, len(entries))
			for i, e := range entries {
				list[i] = e
			}
			xr["spec"].(map[string]any)["adapters"] = list
		}
	}
	ad := func(name, uri string) map[string]any { return map[string]any{"name": name, "uri": uri} }
	// traffic sets spec.model.version to "1" and spec.traffic to entries.
	tv := func(version string, weight int, uri string) map[string]any {
		e := map[string]any{"version": version, "weight": weight}
		if uri != "" {
			e["uri"] = uri
		}
		return e
	}
	traffic := func(entries ...map[string]any) func(map[string]any) {
		return func(xr map[string]any) {
			spec := xr["spec"].(map[string]any)
			if m := spec["model"].(map[string]any); m["version"] == nil {
				m["version"] = "1"
			}
			list := make([]any, len(entries))
			for i, e := range entries {
				list[i] = e
			}
			spec["traffic"] = list
		}
	}

	cases := map[string]struct {
		xr    func(map[string]any)
		input map[string]any
		field string // the field path the message names
		fix   string // a fragment of the fix it suggests
		// taken are Services that Crossplane fetched for the function's
		// requirements (see names.go), by name.
		taken map[string]map[string]any
	}{
		// Credentials reach a puller only as the variables it reads.
		"CredentialsS3Key":          {xr: both(model("uri", "s3://models/llama"), model("credentialsSecretRef", map[string]any{"name": "aws", "key": "AWS_ENDPOINT_URL"})), field: "spec.model.credentialsSecretRef.key", fix: "remove the key"},
		"CredentialsNoTokenEnv":     {xr: model("credentialsSecretRef", map[string]any{"name": "hf-credentials"}), input: onlyPresets(nil, nil), field: "spec.model.credentialsSecretRef", fix: "input.pullers.hf.tokenEnv is empty"},
		"InputCredentialSelectorOp": {input: map[string]any{"policy": map[string]any{"credentialSecretSelector": map[string]any{"matchExpressions": []any{map[string]any{"key": "team", "operator": "Like", "values": []any{"a"}}}}}}, field: "input.policy.credentialSecretSelector", fix: "is not a label selector"},

		// Enums.
		"FrameworkUnknown":       {xr: model("framework", "pytorch"), field: "spec.model.framework", fix: "use one of vllm, sglang, triton, tgi, llamacpp, ollama, fake"},
		"FrameworkWrongCase":     {xr: model("framework", "VLLM"), field: "spec.model.framework", fix: "use one of vllm"},
		"AccessModeUnknown":      {xr: set("ReadOnlyMany", "spec", "storage", "accessMode"), field: "spec.storage.accessMode", fix: "use ReadWriteOnce or ReadWriteMany"},
		"AccessModeRWOP":         {xr: set("ReadWriteOncePod", "spec", "storage", "accessMode"), field: "spec.storage.accessMode", fix: "use ReadWriteOnce or ReadWriteMany"},
		"InputAccessModeUnknown": {input: map[string]any{"storage": map[string]any{"accessMode": "RWX"}}, field: "input.storage.accessMode", fix: "use ReadWriteOnce or ReadWriteMany"},

		// Counts: min > max, negative, zero.
		"MinAboveMax":        {xr: set(map[string]any{"min": 4, "max": 2}, "spec", "replicas"), field: "spec.replicas", fix: "raise max or lower min"},
		"MinNegative":        {xr: set(map[string]any{"min": -1}, "spec", "replicas"), field: "spec.replicas.min", fix: "use 0 or more"},
		"MaxNegative":        {xr: set(map[string]any{"max": -3}, "spec", "replicas"), field: "spec.replicas.max", fix: "use 1 or more"},
		"MaxZero":            {xr: set(map[string]any{"min": 1, "max": 0}, "spec", "replicas"), field: "spec.replicas.max", fix: "use 1 or more"},
		"ReplicasOverLimit":  {xr: set(map[string]any{"min": 1, "max": 5000}, "spec", "replicas"), field: "spec.replicas", fix: "at most 1000 servers"},
		"GPUNegative":        {xr: set(-1, "spec", "resources", "gpu"), field: "spec.resources.gpu", fix: "use 0 to 64 GPUs"},
		"GPUTooMany":         {xr: set(65, "spec", "resources", "gpu"), field: "spec.resources.gpu", fix: "use 0 to 64 GPUs"},
		"CPUZero":            {xr: set("0", "spec", "resources", "cpu"), field: "spec.resources.cpu", fix: "must be more than zero"},
		"MemoryNegative":     {xr: set("-1Gi", "spec", "resources", "memory"), field: "spec.resources.memory", fix: "must be more than zero"},
		"StorageSizeZero":    {xr: set("0", "spec", "storage", "size"), field: "spec.storage.size", fix: "must be more than zero"},
		"ConcurrencyZero":    {xr: set(map[string]any{"enabled": true, "targetConcurrency": 0}, "spec", "autoscaling"), field: "spec.autoscaling.targetConcurrency", fix: "must be at least 1"},
		"CPUUtilizationZero": {xr: set(map[string]any{"enabled": true, "targetCPUUtilization": 0}, "spec", "autoscaling"), field: "spec.autoscaling.targetCPUUtilization", fix: "use a percentage from 1 to 100"},
		"CPUUtilizationOver": {xr: set(map[string]any{"enabled": true, "targetCPUUtilization": 150}, "spec", "autoscaling"), field: "spec.autoscaling.targetCPUUtilization", fix: "use a percentage from 1 to 100"},
		"AutoscalingMinZero": {xr: both(set(map[string]any{"min": 0, "max": 3}, "spec", "replicas"), set(map[string]any{"enabled": true}, "spec", "autoscaling")), field: "spec.replicas.min", fix: "ask your platform team to enable KEDA (input.keda)"},

		// Scale to zero (input.keda).
		"ScaleToZeroKEDAOff":       {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": false, "prometheusAddress": "http://prom:9090"}}, field: "spec.replicas.min", fix: "use 1 or more, or ask your platform team to enable KEDA"},
		"ScaleToZeroWithTraffic":   {xr: both(scaleToZero, set("1", "spec", "model", "version"), set([]any{map[string]any{"version": "1", "weight": 90}, map[string]any{"version": "2", "weight": 10, "uri": "hf://org/other"}}, "spec", "traffic")), input: kedaOn, field: "spec.replicas.min", fix: "set min to 1 or more while the split lasts, or remove spec.traffic"},
		"ScaleToZeroNoConcurrency": {xr: both(set(map[string]any{"min": 0, "max": 3}, "spec", "replicas"), set(map[string]any{"enabled": true, "targetCPUUtilization": 70}, "spec", "autoscaling")), input: kedaOn, field: "spec.autoscaling.targetConcurrency", fix: "set it, e.g. 10"},
		"ScaleToZeroNoPrometheus":  {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true}}, field: "input.keda.prometheusAddress", fix: "name the Prometheus KEDA queries"},
		"ScaleToZeroPromNotURL":    {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "prometheus:9090"}}, field: "input.keda.prometheusAddress", fix: "must be an http:// or https:// URL with a host"},
		"ScaleToZeroPromQuote":     {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": `http://p:9090"}) or vector(1`}}, field: "input.keda.prometheusAddress", fix: "is not a URL"},
		"ScaleToZeroPromUser":      {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://u:p@prom:9090"}}, field: "input.keda.prometheusAddress", fix: "TriggerAuthentication"},
		"ScaleToZeroCooldownShort": {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090", "cooldownPeriod": 5}}, field: "input.keda.cooldownPeriod", fix: "use 30 to 86400 seconds"},
		"ScaleToZeroPollingZero":   {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090", "pollingInterval": 0}}, field: "input.keda.pollingInterval", fix: "use 1 to 3600 seconds"},
		"ScaleToZeroFallbackZero":  {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090", "fallback": map[string]any{"failureThreshold": 3, "replicas": 0}}}, field: "input.keda.fallback.replicas", fix: "use 1 to 1000 servers"},
		"ScaleToZeroFallbackNever": {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090", "fallback": map[string]any{"failureThreshold": 0, "replicas": 1}}}, field: "input.keda.fallback.failureThreshold", fix: "use 1 to 100 failed queries"},
		"ScaleToZeroHTTPScalerURL": {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090", "httpAddOn": map[string]any{"enabled": true, "scalerAddress": "grpc://scaler:9090"}}}, field: "input.keda.httpAddOn.scalerAddress", fix: "is not host:port"},
		// The servers admit the interceptor from the scaler's namespace.
		"NetworkPolicyKEDANamespaceDisagrees": {xr: scaleToZero, input: map[string]any{"networkPolicy": map[string]any{"enabled": true, "metricsNamespace": "monitoring", "kedaNamespace": "keda"}, "keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090", "httpAddOn": map[string]any{"enabled": true, "scalerAddress": "keda-add-ons-http-external-scaler.autoscaling.svc.cluster.local:9090"}}}, field: "input.networkPolicy.kedaNamespace", fix: `which runs in namespace "autoscaling" beside the interceptor; the servers would admit the wrong namespace and a claim at zero would never be answered: set it to "autoscaling"`},
		"NetworkPolicyKEDANamespaceUnknown":   {xr: scaleToZero, input: map[string]any{"networkPolicy": map[string]any{"enabled": true, "metricsNamespace": "monitoring"}, "keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090", "httpAddOn": map[string]any{"enabled": true, "scalerAddress": "10.0.0.7:9090"}}}, field: "input.networkPolicy.kedaNamespace", fix: "is required: the add-on's scaler, 10.0.0.7:9090 (input.keda.httpAddOn.scalerAddress), names no namespace"},
		"ScaleToZeroHTTPTimeout0":             {xr: scaleToZero, input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090", "httpAddOn": map[string]any{"enabled": true, "responseTimeoutSeconds": 0}}}, field: "input.keda.httpAddOn.responseTimeoutSeconds", fix: "use 1 to 86400 seconds"},
		"ScaleToZeroMetricPromQL":             {xr: both(scaleToZero, model("framework", "fake")), input: map[string]any{"keda": map[string]any{"enabled": true, "prometheusAddress": "http://prom:9090"}, "runtimes": map[string]any{"fake": map[string]any{"concurrencyMetric": `up{job="x"} or vector(9)`}}}, field: "input.runtimes.fake.concurrencyMetric", fix: "is not a Prometheus metric name"},
		"InputBackoffNegative":                {input: map[string]any{"pullBackoffLimit": -1}, field: "input.pullBackoffLimit", fix: "use 0 to 20"},
		"InputDeadlineTooShort":               {input: map[string]any{"pullDeadlineSeconds": 10}, field: "input.pullDeadlineSeconds", fix: "use 60 to 604800 seconds"},
		"InputStallTooLong":                   {input: map[string]any{"pullStallSeconds": 7200}, field: "input.pullStallSeconds", fix: "use 30 to 3600 seconds"},
		"InputRolloutNoRoom":                  {input: map[string]any{"rollout": map[string]any{"maxSurge": 0}}, field: "input.rollout", fix: "a rollout could never replace a server"},
		"InputRolloutNoRoomPct":               {input: map[string]any{"rollout": map[string]any{"maxSurge": "0%", "maxUnavailable": "0%"}}, field: "input.rollout", fix: "allow a surge"},
		"InputSurgeNegative":                  {input: map[string]any{"rollout": map[string]any{"maxSurge": -1}}, field: "input.rollout.maxSurge", fix: "use a number of servers of 0 or more"},
		"InputUnavailableWords":               {input: map[string]any{"rollout": map[string]any{"maxUnavailable": "half"}}, field: "input.rollout.maxUnavailable", fix: `write e.g. 1 or "25%"`},
		"InputUnavailableOver":                {input: map[string]any{"rollout": map[string]any{"maxUnavailable": "150%"}}, field: "input.rollout.maxUnavailable", fix: "a percentage from 0% to 100%"},

		// Malformed quantities and wrong types.
		"CPUWithUnit":      {xr: set("4 cores", "spec", "resources", "cpu"), field: "spec.resources.cpu", fix: `write it like "500m", "4" or "16Gi"`},
		"MemoryWords":      {xr: set("lots", "spec", "resources", "memory"), field: "spec.resources.memory", fix: `write it like "500m", "4" or "16Gi"`},
		"StorageSizeWords": {xr: set("big", "spec", "storage", "size"), field: "spec.storage.size", fix: `write it like "500m", "4" or "16Gi"`},
		"CPUObject":        {xr: set(map[string]any{"cores": 4}, "spec", "resources", "cpu"), field: "spec.resources.cpu", fix: `must be a quantity such as "4" or "16Gi"`},
		"MinAsWord":        {xr: set(map[string]any{"min": "two"}, "spec", "replicas"), field: "spec.replicas.min", fix: "must be an integer"},
		"EnabledAsWord":    {xr: set(map[string]any{"enabled": "yes"}, "spec", "autoscaling"), field: "spec.autoscaling.enabled", fix: "must be true or false"},
		"EnvAsString":      {xr: set(map[string]any{"env": "FOO=bar"}, "spec", "serve"), field: "spec.serve.env", fix: "must be a list"},
		"GPUAsFraction":    {xr: set(0.5, "spec", "resources", "gpu"), field: "spec.resources.gpu", fix: "must be an integer"},
		// GPUs through DRA (input.gpu.dra): the claim names a type, never
		// an expression; the Input's expressions must be CEL.
		"GPUTypeNoGPU":            {xr: both(set(0, "spec", "resources", "gpu"), set("h100", "spec", "resources", "gpuType")), input: draInput, field: "spec.resources.gpuType", fix: "set spec.resources.gpu or remove gpuType"},
		"GPUTypeExtendedResource": {xr: both(set(1, "spec", "resources", "gpu"), set("h100", "spec", "resources", "gpuType")), field: "spec.resources.gpuType", fix: "as the extended resource nvidia.com/gpu and names no GPU types"},
		"GPUTypeUnknown":          {xr: both(set(1, "spec", "resources", "gpu"), set("b200", "spec", "resources", "gpuType")), input: draInput, field: "spec.resources.gpuType", fix: "use one of a100, h100 (input.gpu.dra.types)"},
		"GPUTypeNoneOffered":      {xr: both(set(1, "spec", "resources", "gpu"), set("h100", "spec", "resources", "gpuType")), input: dra(map[string]any{"deviceClassName": "gpu.example.com"}), field: "spec.resources.gpuType", fix: "names no GPU types"},
		"GPUDRATooMany":           {xr: set(33, "spec", "resources", "gpu"), input: draInput, field: "spec.resources.gpu", fix: "request at most 32"},
		"DRAWithResourceName":     {input: map[string]any{"gpu": map[string]any{"resourceName": "amd.com/gpu", "dra": map[string]any{"deviceClassName": "gpu.example.com"}}}, field: "input.gpu.resourceName", fix: "either as an extended resource or through DRA"},
		"DRANoDeviceClass":        {input: dra(map[string]any{"deviceClassName": ""}), field: "input.gpu.dra.deviceClassName", fix: "name the DeviceClass"},
		"DRABadDeviceClass":       {input: dra(map[string]any{"deviceClassName": "GPU_Class"}), field: "input.gpu.dra.deviceClassName", fix: "is not a DeviceClass name"},
		"DRASelectorNotCEL":       {input: dra(map[string]any{"deviceClassName": "gpu.example.com", "selectors": []any{"device.attributes[\"x\"].model =="}}), field: "input.gpu.dra.selectors[0]", fix: "is not a CEL expression"},
		"DRASelectorEmpty":        {input: dra(map[string]any{"deviceClassName": "gpu.example.com", "selectors": []any{" "}}), field: "input.gpu.dra.selectors[0]", fix: "write a CEL expression"},
		"DRATypeName":             {input: dra(map[string]any{"deviceClassName": "gpu.example.com", "types": map[string]any{"H100": map[string]any{"selectors": []any{"true"}}}}), field: "input.gpu.dra.types.H100", fix: "cannot be a GPU type a claim names"},
		"DRATypeNoSelectors":      {input: dra(map[string]any{"deviceClassName": "gpu.example.com", "types": map[string]any{"h100": map[string]any{"selectors": []any{}}}}), field: "input.gpu.dra.types.h100.selectors", fix: "a GPU type is the selectors its devices satisfy"},
		"DRATypeSelectorNotCEL":   {input: dra(map[string]any{"deviceClassName": "gpu.example.com", "types": map[string]any{"h100": map[string]any{"selectors": []any{"device.capacity[[["}}}}), field: "input.gpu.dra.types.h100.selectors[0]", fix: "is not a CEL expression"},
		"InputPortAsWord":         {input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"port": "eighty"}}}, field: "input.runtimes.port", fix: "check the Composition's function Input against its schema"},
		"InputUnknownField":       {input: map[string]any{"runtime": map[string]any{"vllm": map[string]any{"image": "x"}}}, field: "runtime", fix: "check the Composition's function Input against its schema"},
		"InputUnknownNested":      {input: map[string]any{"storage": map[string]any{"sizeGi": 50}}, field: "sizeGi", fix: "check the Composition's function Input against its schema"},

		// URIs.
		"URIMissing":         {xr: model("uri", ""), field: "spec.model.uri", fix: "set it to hf://org/model"},
		"URINoScheme":        {xr: model("uri", "meta-llama/Llama-3.1-8B"), field: "spec.model.uri", fix: "use hf://, s3://, gs://, http(s)://, pvc:// or oci://"},
		"URIFTP":             {xr: model("uri", "ftp://files.example.com/llama.gguf"), field: "spec.model.uri", fix: "use hf://, s3://, gs://, http(s)://, pvc:// or oci://"},
		"URIUppercaseScheme": {xr: model("uri", "HF://meta-llama/Llama-3.1-8B"), field: "spec.model.uri", fix: "use hf://"},
		"URIUserPassword":    {xr: model("uri", "https://user:hunter2@files.example.com/llama.gguf"), field: "spec.model.uri", fix: "put them in a Secret and set spec.model.credentialsSecretRef"},
		"URIS3AccessKey":     {xr: model("uri", "s3://AKIAXXX:secret@bucket/llama"), field: "spec.model.uri", fix: "put them in a Secret"},
		"URIPVCNoClaim":      {xr: model("uri", "pvc:///models/llama"), field: "spec.model.uri", fix: "write pvc://<claim>[/path]"},
		"URIPVCBadClaim":     {xr: model("uri", "pvc://Shared_Models/llama"), field: "spec.model.uri", fix: "lower case alphanumeric"},
		"URIPVCDotDot":       {xr: model("uri", "pvc://shared/../etc"), field: "spec.model.uri", fix: "must be clean and relative"},
		"URIHFNotARepo":      {xr: model("uri", "hf://org/model/extra"), field: "spec.model.uri", fix: "write hf://org/model"},
		"URIS3NoBucket":      {xr: model("uri", "s3:///llama"), field: "spec.model.uri", fix: "write s3://bucket/prefix"},
		"URIGSWildcard":      {xr: model("uri", "gs://models/llama-*"), field: "spec.model.uri", fix: "name one bucket and prefix"},
		"URIHTTPSNoHost":     {xr: model("uri", "https:///llama.gguf"), field: "spec.model.uri", fix: "write https://host/path/to/file"},
		"URIWithSpace":       {xr: model("uri", "https://h/my model.gguf"), field: "spec.model.uri", fix: "must not contain spaces"},
		"RevisionDotDot":     {xr: model("revision", "../main"), field: "spec.model.revision", fix: "use a branch, tag, commit or object version"},
		"VersionNotALabel":   {xr: model("version", "v1 beta"), field: "spec.model.version", fix: "use at most 63 letters, digits"},

		// Credentials.
		"CredentialsWithPVC": {
			xr:    both(model("uri", "pvc://shared/llama"), model("credentialsSecretRef", map[string]any{"name": "hf-credentials", "key": "HF_TOKEN"})),
			field: "spec.model.credentialsSecretRef", fix: "remove it",
		},
		"CredentialsOverPlainHTTP": {
			xr:    both(model("uri", "http://mirror.internal/llama.gguf"), model("credentialsSecretRef", map[string]any{"name": "mirror", "key": "TOKEN"})),
			field: "spec.model.credentialsSecretRef", fix: `list "mirror.internal" in input.policy.plainHTTPCredentialHosts`,
		},
		"CredentialsOverPlainHTTPOtherHost": {
			xr:    both(model("uri", "http://mirror.internal:8080/llama.gguf"), model("credentialsSecretRef", map[string]any{"name": "mirror"})),
			input: map[string]any{"policy": map[string]any{"plainHTTPCredentialHosts": []any{"mirror.internal"}}},
			field: "spec.model.credentialsSecretRef", fix: "use https://",
		},
		"TrafficCredentialsOverPlainHTTP": {
			xr:    traffic(tv("1", 90, ""), map[string]any{"version": "2", "weight": 10, "uri": "http://mirror.internal/v2.gguf", "credentialsSecretRef": map[string]any{"name": "mirror"}}),
			field: "spec.traffic[1].credentialsSecretRef", fix: "input.policy.plainHTTPCredentialHosts",
		},
		"TrafficCredentialsWithPVC": {
			xr:    traffic(tv("1", 90, ""), map[string]any{"version": "2", "weight": 10, "uri": "pvc://shared/v2", "credentialsSecretRef": map[string]any{"name": "hf"}}),
			field: "spec.traffic[1].credentialsSecretRef", fix: "remove it",
		},
		"TrafficCredentialsBadName": {
			xr:    traffic(tv("1", 90, ""), map[string]any{"version": "2", "weight": 10, "uri": "hf://org/v2", "credentialsSecretRef": map[string]any{"name": "HF_Two"}}),
			field: "spec.traffic[1].credentialsSecretRef.name", fix: "lower case alphanumeric",
		},
		"TrafficCredentialsBadKey": {
			xr:    traffic(tv("1", 90, ""), map[string]any{"version": "2", "weight": 10, "uri": "hf://org/v2", "credentialsSecretRef": map[string]any{"name": "hf", "key": "a key"}}),
			field: "spec.traffic[1].credentialsSecretRef.key", fix: "alphanumeric characters",
		},
		"CredentialsPVCPrimaryWithCanary": {
			xr:    both(model("uri", "pvc://shared/llama"), model("credentialsSecretRef", map[string]any{"name": "hf"}), traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2"))),
			field: "spec.model.credentialsSecretRef", fix: "names its own",
		},
		"CredentialsBadName": {xr: model("credentialsSecretRef", map[string]any{"name": "HF_Credentials"}), field: "spec.model.credentialsSecretRef.name", fix: "lower case alphanumeric"},
		"CredentialsBadKey":  {xr: model("credentialsSecretRef", map[string]any{"name": "hf", "key": "my key"}), field: "spec.model.credentialsSecretRef.key", fix: "alphanumeric characters, '-', '_' or '.'"},

		// Ports.
		"ServePortTooHigh":  {xr: set(70000, "spec", "serve", "port"), field: "spec.serve.port", fix: "use a port from 1 to 65535"},
		"ServePortZero":     {xr: set(0, "spec", "serve", "port"), field: "spec.serve.port", fix: "use a port from 1 to 65535"},
		"InputPortNegative": {input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"port": -1}}}, field: "input.runtimes.vllm.port", fix: "use a port from 1 to 65535"},

		// Names and namespaces.
		"NameTooLongAfterSuffix": {xr: set(long, "metadata", "labels", resolve.LabelClaimName), field: "metadata.name", fix: "use at most 49"},
		"NameLeadingDigit":       {xr: set("3llama", "metadata", "labels", resolve.LabelClaimName), field: "metadata.name", fix: "rename the InferenceService"},
		"NameWithDot":            {xr: set("llama.v2", "metadata", "labels", resolve.LabelClaimName), field: "metadata.name", fix: "rename the InferenceService"},
		"NoClaimNoNamespace": {
			xr:    func(xr map[string]any) { xr["metadata"] = map[string]any{"name": "llama-abcde"} },
			field: "metadata.labels", fix: "set input.namespace in the Composition",
		},
		"InputNamespaceInvalid": {
			xr:    func(xr map[string]any) { xr["metadata"] = map[string]any{"name": "llama"} },
			input: map[string]any{"namespace": "Team_A"}, field: "namespace", fix: "lower case alphanumeric",
		},

		// Server environment.
		"EnvReservedModelDir": {xr: set(map[string]any{"env": []any{map[string]any{"name": "MODEL_DIR", "value": "/x"}}}, "spec", "serve"), field: "spec.serve.env[0].name", fix: "is set by the function; remove it"},
		"EnvReservedPort":     {xr: set(map[string]any{"env": []any{map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "PORT", "value": "1"}}}, "spec", "serve"), field: "spec.serve.env[1].name", fix: "remove it"},
		"EnvBadName":          {xr: set(map[string]any{"env": []any{map[string]any{"name": "1BAD=", "value": "x"}}}, "spec", "serve"), field: "spec.serve.env[0].name", fix: "a valid environment variable name must consist"},
		"EnvValueAndFrom": {
			xr:    set(map[string]any{"env": []any{map[string]any{"name": "K", "value": "x", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": "k"}}}}}, "spec", "serve"),
			field: "spec.serve.env[0]", fix: "keep one",
		},

		// Autoscaling on a runtime without a concurrency metric.
		"ConcurrencyOnOllama": {
			xr:    both(model("framework", "ollama"), set(map[string]any{"enabled": true, "targetConcurrency": 4}, "spec", "autoscaling")),
			field: "spec.autoscaling.targetConcurrency", fix: "use targetCPUUtilization",
		},

		// Storage.
		"StorageClassInvalid": {xr: set("Fast_SSD", "spec", "storage", "storageClassName"), field: "spec.storage.storageClassName", fix: "lower case alphanumeric"},

		// Traffic splits.
		"TrafficWeightsNot100":     {xr: traffic(tv("1", 90, ""), tv("2", 20, "hf://org/v2")), field: "spec.traffic", fix: "the weights sum to 110; make them sum to 100"},
		"TrafficDuplicateVersion":  {xr: traffic(tv("1", 50, ""), tv("2", 25, "hf://org/v2"), tv("2", 25, "hf://org/v3")), field: "spec.traffic[2].version", fix: "give each version one entry"},
		"TrafficMissingPrimary":    {xr: traffic(tv("2", 50, "hf://org/v2"), tv("3", 50, "hf://org/v3")), field: "spec.traffic", fix: `add {version: "1", weight: …}`},
		"TrafficNoPrimaryVersion":  {xr: both(model("version", ""), traffic(tv("2", 100, "hf://org/v2"))), field: "spec.model.version", fix: "set it and list it in spec.traffic"},
		"TrafficCanaryWithoutURI":  {xr: traffic(tv("1", 90, ""), tv("2", 10, "")), field: "spec.traffic[1].uri", fix: "name its weights"},
		"TrafficVersionBadName":    {xr: traffic(tv("1", 90, ""), tv("V2_beta", 10, "hf://org/v2")), field: "spec.traffic[1].version", fix: "use lowercase letters, digits and '-'"},
		"TrafficVersionTooLong":    {xr: traffic(tv("1", 90, ""), tv(strings.Repeat("v", 60), 10, "hf://org/v2")), field: "spec.traffic[1].version", fix: "at most 57 characters"},
		"TrafficPrimaryNotALabel":  {xr: both(model("version", "1.0"), traffic(tv("1.0", 90, ""), tv("2", 10, "hf://org/v2"))), field: "spec.traffic[0].version", fix: "use lowercase letters, digits and '-'"},
		"TrafficPrimaryWithURI":    {xr: traffic(tv("1", 90, "hf://org/other"), tv("2", 10, "hf://org/v2")), field: "spec.traffic[0]", fix: "remove uri, revision and credentialsSecretRef here"},
		"TrafficWeightOver100":     {xr: traffic(tv("1", 150, ""), tv("2", -50, "hf://org/v2")), field: "spec.traffic[0].weight", fix: "use a percentage from 0 to 100"},
		"TrafficSameWeights":       {xr: traffic(tv("1", 90, ""), tv("2", 10, "hf://meta-llama/Llama-3.1-8B-Instruct")), field: "spec.traffic[1]", fix: "must differ from the primary in its weights"},
		"TrafficCanaryBadURI":      {xr: traffic(tv("1", 90, ""), tv("2", 10, "ftp://x/y")), field: "spec.traffic[1].uri", fix: "use hf://, s3://, gs://, http(s)://, pvc:// or oci://"},
		"TrafficCanaryBadRevision": {xr: traffic(tv("1", 90, ""), map[string]any{"version": "2", "weight": 10, "uri": "hf://org/v2", "revision": "../x"}), field: "spec.traffic[1].revision", fix: "use a branch, tag, commit"},
		"TrafficEmpty":             {xr: set([]any{}, "spec", "traffic"), field: "spec.traffic", fix: "or leave traffic out"},
		"TrafficNoPullerForCanary": {xr: traffic(tv("1", 90, ""), tv("2", 10, "s3://bucket/v2")), input: onlyPresets(nil, nil), field: "spec.traffic[1].uri", fix: "ask your platform team"},
		"GatewayBadName":           {xr: traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2")), input: map[string]any{"traffic": map[string]any{"gateway": map[string]any{"name": "Main_GW"}}}, field: "input.traffic.gateway.name", fix: "lower case alphanumeric"},
		"GatewayBadScheme":         {xr: traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2")), input: map[string]any{"traffic": map[string]any{"gateway": map[string]any{"name": "gw", "scheme": "grpc"}}}, field: "input.traffic.gateway.scheme", fix: "use http or https"},
		"GatewayBadDomain":         {xr: traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2")), input: map[string]any{"traffic": map[string]any{"gateway": map[string]any{"name": "gw", "domain": "Models_Example"}}}, field: "input.traffic.gateway.domain", fix: "is not a DNS name"},
		"GatewaySharedNoDomain":    {xr: traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2")), input: map[string]any{"traffic": map[string]any{"gateway": map[string]any{"name": "inference", "namespace": "gateways"}}}, field: "input.traffic.gateway.domain", fix: "the platform must set the domain the Gateway's listener serves, and this claim's route gets the hostname llama.team-a.<domain>"},
		"GatewayOwnNoDomain":       {xr: traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2")), input: map[string]any{"traffic": map[string]any{"gateway": map[string]any{"name": "inference"}}}, field: "input.traffic.gateway.domain", fix: "on Gateway team-a/inference have no hostname"},
		"PoolNoDomain":             {input: map[string]any{"traffic": map[string]any{"gateway": map[string]any{"name": "inference", "namespace": "gateways", "inferenceExtension": map[string]any{"enabled": true}}}}, field: "input.traffic.gateway.domain", fix: "the oldest takes them all"},
		"PickerBadFailureMode":     {input: poolInput(map[string]any{"failureMode": "FailSoft"}, nil), field: "input.traffic.gateway.inferenceExtension.failureMode", fix: "use FailClose or FailOpen"},
		"PickerBadImage":           {input: poolInput(nil, map[string]any{"image": "epp latest"}), field: "input.traffic.gateway.inferenceExtension.picker.image", fix: "is not an image reference"},
		"PickerManagedFlag":        {input: poolInput(nil, map[string]any{"args": []any{"--v", "2", "--pool-name=other"}}), field: "input.traffic.gateway.inferenceExtension.picker.args[2]", fix: "sets a flag the function sets"},
		"PickerManagedFlagSep":     {input: poolInput(nil, map[string]any{"args": []any{"--config-file", "/etc/x"}}), field: "input.traffic.gateway.inferenceExtension.picker.args[0]", fix: "remove it"},
		"PickerConfigNotYAML":      {input: poolInput(nil, map[string]any{"config": "plugins: [unclosed"}), field: "input.traffic.gateway.inferenceExtension.picker.config", fix: "is not YAML"},
		"PickerConfigWrongKind":    {input: poolInput(nil, map[string]any{"config": "apiVersion: v1\nkind: ConfigMap\n"}), field: "input.traffic.gateway.inferenceExtension.picker.config", fix: "give an EndpointPickerConfig"},
		"PickerZeroCPU":            {input: poolInput(nil, map[string]any{"cpu": "0"}), field: "input.traffic.gateway.inferenceExtension.picker.cpu", fix: "is not a positive quantity"},
		"PickerUnknownField":       {input: poolInput(nil, map[string]any{"replicas": 2}), field: "input", fix: "unknown field"},
		"PoolVersionEpp":           {xr: traffic(tv("1", 90, ""), tv("epp", 10, "hf://org/v2")), input: poolInput(nil, nil), field: "spec.traffic", fix: "which is the endpoint picker's"},

		// ModelCache references and the weights' life.
		"CacheRefWithStorage":     {xr: both(model("cacheRef", map[string]any{"name": "llama"}), set("50Gi", "spec", "storage", "size")), field: "spec.storage", fix: "size it on the ModelCache and remove spec.storage"},
		"CacheRefOtherNamespace":  {xr: model("cacheRef", map[string]any{"name": "llama", "namespace": "team-b"}), field: "spec.model.cacheRef.namespace", fix: "create the ModelCache in team-a"},
		"CacheRefWithCredentials": {xr: both(model("cacheRef", map[string]any{"name": "llama"}), model("credentialsSecretRef", map[string]any{"name": "hf"})), field: "spec.model.credentialsSecretRef", fix: "set them on the ModelCache"},
		"CacheRefWithTraffic":     {xr: both(model("cacheRef", map[string]any{"name": "llama"}), traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2"))), field: "spec.traffic", fix: "split traffic between InferenceServices on the same ModelCache"},
		"CacheRefWithPVCURI":      {xr: both(model("cacheRef", map[string]any{"name": "llama"}), model("uri", "pvc://shared/llama")), field: "spec.model.uri", fix: "remove spec.model.cacheRef or the pvc:// uri"},
		"CacheRefBadName":         {xr: model("cacheRef", map[string]any{"name": "Llama_Cache"}), field: "spec.model.cacheRef.name", fix: "is not a ModelCache name"},
		"PurgeOnDeleteFalse":      {xr: set(false, "spec", "storage", "purgeOnDelete"), field: "spec.storage.purgeOnDelete", fix: "pull them with a ModelCache and set spec.model.cacheRef"},
		"NoURINoCacheRef":         {xr: model("uri", ""), field: "spec.model.uri", fix: "is required"},

		// The platform's Input.
		"PresetMissingImage":               {input: onlyPresets(map[string]any{"image": nil}, nil), field: "input.runtimes.vllm.image", fix: "must give the vllm runtime an image"},
		"PullerMissingImage":               {input: onlyPresets(nil, map[string]any{"image": nil}), field: "input.pullers.hf.image", fix: "must give the hf:// puller an image"},
		"PullerMissingCommand":             {input: onlyPresets(nil, map[string]any{"command": nil}), field: "input.pullers.hf.command", fix: "a download command"},
		"PresetMissingPort":                {input: onlyPresets(map[string]any{"port": nil}, nil), field: "input.runtimes.vllm.port", fix: "must give the vllm runtime a port"},
		"PresetHealthPathRelative":         {input: onlyPresets(map[string]any{"healthPath": "health"}, nil), field: "input.runtimes.vllm.healthPath", fix: "starting with '/'"},
		"PresetStartupTooShort":            {input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"startupSeconds": 5}}}, field: "input.runtimes.vllm.startupSeconds", fix: "at least 10 seconds"},
		"NoRuntimeForFramework":            {xr: model("framework", "tgi"), input: onlyPresets(nil, nil), field: "spec.model.framework", fix: "ask your platform team or choose another framework"},
		"NoPullerForScheme":                {xr: model("uri", "s3://bucket/llama"), input: onlyPresets(nil, nil), field: "spec.model.uri", fix: "ask your platform team or use another source"},
		"InputServiceAccountBadName":       {input: map[string]any{"serverServiceAccount": map[string]any{"name": "Model_Servers"}}, field: "input.serverServiceAccount.name", fix: "is not a ServiceAccount name"},
		"NetworkPolicyBadGatewayNamespace": {input: map[string]any{"networkPolicy": map[string]any{"enabled": true, "gatewayNamespace": "Gateways"}}, field: "input.networkPolicy.gatewayNamespace", fix: "is not a namespace name"},
		"NetworkPolicyBadMetricsNamespace": {input: map[string]any{"networkPolicy": map[string]any{"enabled": true, "metricsNamespace": "monitoring_ns"}}, field: "input.networkPolicy.metricsNamespace", fix: "is not a namespace name"},
		// Prometheus reads the servers, and the servers' NetworkPolicy admits no metrics namespace.
		"NetworkPolicyConcurrencyNoMetricsNamespace": {xr: set(map[string]any{"enabled": true, "targetConcurrency": 8}, "spec", "autoscaling"), input: map[string]any{"networkPolicy": map[string]any{"enabled": true}}, field: "input.networkPolicy.metricsNamespace", fix: "scale on CPU alone (spec.autoscaling.targetCPUUtilization without targetConcurrency)"},
		"NetworkPolicyPodMonitorNoMetricsNamespace":  {input: map[string]any{"networkPolicy": map[string]any{"enabled": true}, "monitoring": map[string]any{"podMonitor": map[string]any{"enabled": true}}}, field: "input.networkPolicy.metricsNamespace", fix: "name the namespace Prometheus runs in"},
		"NetworkPolicyScaleToZeroNoMetricsNamespace": {xr: scaleToZero, input: map[string]any{"networkPolicy": map[string]any{"enabled": true}, "keda": kedaOn["keda"]}, field: "input.networkPolicy.metricsNamespace", fix: "name the namespace Prometheus runs in"},
		// What the servers may reach out to: one destination an entry, each
		// a range or a namespace that exists, on ports that exist.
		"NetworkPolicyBadDNSNamespace":        {input: map[string]any{"networkPolicy": map[string]any{"enabled": true, "dnsNamespace": "Kube-System"}}, field: "input.networkPolicy.dnsNamespace", fix: "is not a namespace name"},
		"NetworkPolicyEgressEmptyEntry":       {input: egress(map[string]any{"ports": []any{port(443, "")}}), field: "input.networkPolicy.egress[0]", fix: "set cidr (an address range, such as 10.20.0.0/16) or namespace"},
		"NetworkPolicyEgressCIDRAndNamespace": {input: egress(map[string]any{"cidr": "10.0.0.0/8", "namespace": "tracing"}), field: "input.networkPolicy.egress[0]", fix: "split it into two entries"},
		"NetworkPolicyEgressBadCIDR":          {input: egress(map[string]any{"cidr": "10.0.0.0/8"}, map[string]any{"cidr": "10.300.0.0/16"}), field: "input.networkPolicy.egress[1].cidr", fix: "write an address and a prefix length, such as 10.20.0.0/16"},
		"NetworkPolicyEgressCIDRNoLength":     {input: egress(map[string]any{"cidr": "192.0.2.10"}), field: "input.networkPolicy.egress[0].cidr", fix: "192.0.2.10/32"},
		"NetworkPolicyEgressCIDRHostBits":     {input: egress(map[string]any{"cidr": "10.1.2.3/8"}), field: "input.networkPolicy.egress[0].cidr", fix: "write the range as 10.0.0.0/8"},
		"NetworkPolicyEgressExceptOutside":    {input: egress(map[string]any{"cidr": "10.0.0.0/8", "except": []any{"169.254.169.254/32"}}), field: "input.networkPolicy.egress[0].except[0]", fix: "is not a range inside cidr 10.0.0.0/8"},
		"NetworkPolicyEgressExceptBad":        {input: egress(map[string]any{"cidr": "10.0.0.0/8", "except": []any{"10.1.0.0"}}), field: "input.networkPolicy.egress[0].except[0]", fix: "is not an address range"},
		"NetworkPolicyEgressExceptNoCIDR":     {input: egress(map[string]any{"namespace": "tracing", "except": []any{"10.1.0.0/16"}}), field: "input.networkPolicy.egress[0].except", fix: "is only for a cidr"},
		"NetworkPolicyEgressBadNamespace":     {input: egress(map[string]any{"namespace": "Tracing"}), field: "input.networkPolicy.egress[0].namespace", fix: "is not a namespace name"},
		"NetworkPolicyEgressPortZero":         {input: egress(map[string]any{"namespace": "tracing", "ports": []any{port(4317, ""), port(0, "TCP")}}), field: "input.networkPolicy.egress[0].ports[1].port", fix: "use 1 to 65535, or leave ports out for every port"},
		"NetworkPolicyEgressPortTooHigh":      {input: egress(map[string]any{"cidr": "192.0.2.0/24", "ports": []any{port(70000, "")}}), field: "input.networkPolicy.egress[0].ports[0].port", fix: "use 1 to 65535"},
		"NetworkPolicyEgressPortProtocol":     {input: egress(map[string]any{"cidr": "192.0.2.0/24", "ports": []any{port(9000, "SCTP")}}), field: "input.networkPolicy.egress[0].ports[0].protocol", fix: "is not TCP or UDP"},
		"NetworkPolicyEgressTooManyEntries":   {input: egress(slices.Repeat([]any{map[string]any{"namespace": "tracing"}}, 33)...), field: "input.networkPolicy.egress", fix: "merge ranges into wider cidrs or namespaces"},
		"PodMonitorBadInterval":               {input: map[string]any{"monitoring": map[string]any{"podMonitor": map[string]any{"enabled": true, "interval": "30 seconds"}}}, field: "input.monitoring.podMonitor.interval", fix: "write e.g. 30s"},
		"PodMonitorBadLabelKey":               {input: map[string]any{"monitoring": map[string]any{"podMonitor": map[string]any{"enabled": true, "labels": map[string]any{"a b": "x"}}}}, field: "input.monitoring.podMonitor.labels", fix: "is not a label key"},
		"PodMonitorBadLabelValue":             {input: map[string]any{"monitoring": map[string]any{"podMonitor": map[string]any{"enabled": true, "labels": map[string]any{"release": "prom etheus"}}}}, field: "input.monitoring.podMonitor.labels[release]", fix: "is not a label value"},
		"PullProgressIntervalTooShort":        {input: map[string]any{"pullProgress": map[string]any{"enabled": true, "intervalSeconds": 1}}, field: "input.pullProgress.intervalSeconds", fix: "use 2 to 300 seconds"},
		"InputBadHostEntry":                   {input: map[string]any{"policy": map[string]any{"allowedURIHosts": []any{"models.internal"}}}, field: "input.policy.allowedURIHosts", fix: "e.g. hf://meta-llama"},
		// Names another owner already has (names.go).
		"NameTakenByCanary": {
			xr:    set("llama-2", "metadata", "labels", resolve.LabelClaimName),
			taken: map[string]map[string]any{"llama-2": takenService("llama-2", "llama", "2", resolve.ComponentCanary)},
			field: "metadata.name", fix: `which InferenceService llama (for its version "2") already has`,
		},
		"VersionTakenByClaim": {
			xr:    traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2")),
			taken: map[string]map[string]any{"llama-2": takenService("llama-2", "llama-2", "1", resolve.ComponentServer)},
			field: "spec.traffic[1].version", fix: "which InferenceService llama-2 already has",
		},
		// Models larger than one node (multinode.go).
		"NodesZero":                {xr: set(0, "spec", "nodes"), field: "spec.nodes", fix: "use 1 for a server on one node"},
		"NodesRuntimeCannot":       {xr: both(model("framework", "tgi"), set(2, "spec", "nodes")), field: "spec.nodes", fix: "use framework vllm"},
		"ParallelismRuntimeCannot": {xr: both(model("framework", "tgi"), set(map[string]any{"tensor": 1}, "spec", "parallelism")), field: "spec.parallelism", fix: "has no multiNode"},
		"NodesOverLimit":           {xr: both(set(17, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode")), field: "spec.nodes", fix: "use at most 16"},
		"NodesOverInputLimit":      {xr: set(4, "spec", "nodes"), input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"multiNode": map[string]any{"serverCommand": []any{"vllm", "serve"}, "maxNodes": 2}}}}, field: "spec.nodes", fix: "input.runtimes.vllm.multiNode.maxNodes); use at most 2"},
		"InputMultiNodeNoCommand":  {xr: set(2, "spec", "nodes"), input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"multiNode": map[string]any{"maxNodes": 4}}}}, field: "input.runtimes.vllm.multiNode.serverCommand", fix: "must name the vllm server command"},
		// A group's serving or metrics port on one the Ray head listens on.
		"NodesServeOnRayHead":        {xr: both(set(2, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode"), set(6379, "spec", "serve", "port")), field: "spec.serve.port", fix: "6379 is the Ray head's own port (6379) on each group's leader (spec.nodes 2)"},
		"NodesServeOnRayDashboard":   {xr: both(set(2, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode"), set(8265, "spec", "serve", "port")), field: "spec.serve.port", fix: "is Ray's dashboard"},
		"NodesServeOnRayWorkerPort":  {xr: both(set(2, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode"), set(12000, "spec", "serve", "port")), field: "spec.serve.port", fix: "among Ray's worker ports (10002-19999)"},
		"NodesPresetOnMovedRayHead":  {xr: both(set(2, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode")), input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"multiNode": map[string]any{"serverCommand": []any{"vllm", "serve"}, "rayPort": 8000}}}}, field: "input.runtimes.vllm.port", fix: "the Ray head's own port (8000)"},
		"NodesTooManyGroups":         {xr: both(set(2, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode"), set(map[string]any{"min": 33}, "spec", "replicas")), field: "spec.replicas.min", fix: "over the 32 groups one claim may run"},
		"NodesNoGPU":                 {xr: both(set(2, "spec", "nodes"), set(0, "spec", "resources", "gpu")), field: "spec.resources.gpu", fix: "request 1 or more GPUs per pod"},
		"ParallelismMismatch":        {xr: both(set(2, "spec", "nodes"), set(8, "spec", "resources", "gpu"), set(map[string]any{"tensor": 8, "pipeline": 4}, "spec", "parallelism"), set("ReadWriteMany", "spec", "storage", "accessMode")), field: "spec.parallelism", fix: "use tensor 8 and pipeline 2"},
		"ParallelismOneNodeTooBig":   {xr: both(set(4, "spec", "resources", "gpu"), set(map[string]any{"tensor": 8}, "spec", "parallelism")), field: "spec.parallelism", fix: "use tensor 4 and pipeline 1"},
		"TensorZero":                 {xr: set(map[string]any{"tensor": 0}, "spec", "parallelism"), field: "spec.parallelism.tensor", fix: "use the GPUs per pod (1)"},
		"PipelineNegative":           {xr: set(map[string]any{"pipeline": -1}, "spec", "parallelism"), field: "spec.parallelism.pipeline", fix: "use the number of nodes (1)"},
		"NodesWithCanary":            {xr: both(set(2, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode"), traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2"))), field: "spec.traffic", fix: "roll the new weights out in place by changing spec.model"},
		"NodesWithAutoscaling":       {xr: both(set(2, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode"), set(map[string]any{"min": 1, "max": 3}, "spec", "replicas"), set(map[string]any{"enabled": true}, "spec", "autoscaling")), field: "spec.autoscaling.enabled", fix: "set it to false and size spec.replicas.min"},
		"NodesNotIsolated":           {xr: both(set(2, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode")), field: "spec.nodes", fix: "the platform must turn on input.networkPolicy.enabled (each group then admits only its own pods to them) or, if the cluster isolates the groups itself, set input.runtimes.vllm.multiNode.isolatedByCluster"},
		"NodesNotIsolatedInputOff":   {xr: both(set(2, "spec", "nodes"), set("ReadWriteMany", "spec", "storage", "accessMode")), input: map[string]any{"networkPolicy": map[string]any{"enabled": false}, "runtimes": map[string]any{"vllm": map[string]any{"multiNode": map[string]any{"serverCommand": []any{"vllm", "serve"}, "isolatedByCluster": false}}}}, field: "spec.nodes", fix: "set input.runtimes.vllm.multiNode.isolatedByCluster"},
		"NodesReadWriteOnce":         {xr: both(set(2, "spec", "nodes"), set("ReadWriteOnce", "spec", "storage", "accessMode")), field: "spec.storage.accessMode", fix: "use ReadWriteMany"},
		"NodesInputReadWriteOnce":    {xr: set(2, "spec", "nodes"), field: "input.storage.accessMode", fix: "use ReadWriteMany"},
		"ServeArgsTensorParallel":    {xr: both(set(2, "spec", "resources", "gpu"), set(map[string]any{"tensor": 2}, "spec", "parallelism"), set(map[string]any{"args": []any{"--model=$(MODEL_DIR)", "--tensor-parallel-size=4"}}, "spec", "serve")), field: "spec.serve.args[1]", fix: "set by the function from spec.parallelism"},
		"PresetMissingImageServeSet": {xr: set(map[string]any{"port": 0}, "spec", "serve"), input: onlyPresets(map[string]any{"image": nil}, nil), field: "input.runtimes.vllm.image", fix: "or set spec.serve.image"},

		// LoRA adapters (adapters.go).
		"AdaptersOnTGI":             {xr: both(model("framework", "tgi"), adapters(ad("sql", "hf://org/sql-lora"))), field: "spec.adapters", fix: "use a framework that serves them (vllm, llamacpp)"},
		"AdaptersWithTraffic":       {xr: both(traffic(tv("1", 90, ""), tv("2", 10, "hf://org/v2")), adapters(ad("sql", "hf://org/sql-lora"))), field: "spec.adapters", fix: "finish the canary"},
		"AdaptersPresetWithoutThem": {xr: adapters(ad("sql", "hf://org/sql-lora")), input: onlyPresets(nil, nil), field: "spec.adapters", fix: "input.runtimes.vllm.adapters"},
		"AdapterBadName":            {xr: adapters(ad("SQL_lora", "hf://org/sql-lora")), field: "spec.adapters[0].name", fix: "lower case alphanumeric"},
		"AdapterNamedAsClaim":       {xr: adapters(ad("llama", "hf://org/sql-lora")), field: "spec.adapters[0].name", fix: "give the adapter another name"},
		"AdapterNameTwice":          {xr: adapters(ad("sql", "hf://org/sql-lora"), ad("sql", "hf://org/other")), field: "spec.adapters[1].name", fix: "listed twice"},
		"AdapterSameWeights":        {xr: adapters(ad("sql", "hf://org/sql-lora"), ad("sql2", "hf://org/sql-lora")), field: "spec.adapters[1]", fix: "list each adapter's weights once"},
		"AdapterPVC":                {xr: adapters(ad("sql", "pvc://shared/sql")), field: "spec.adapters[0].uri", fix: "pull it from hf://"},
		"AdapterOCI":                {xr: adapters(ad("sql", "oci://registry.example.com/loras/sql:v1")), field: "spec.adapters[0].uri", fix: "oci:// adapters are not supported"},
		"AdapterNoScheme":           {xr: adapters(ad("sql", "org/sql-lora")), field: "spec.adapters[0].uri", fix: "has no scheme"},
		"AdapterUserInURI":          {xr: adapters(ad("sql", "https://me:pw@host/a.safetensors")), field: "spec.adapters[0].uri", fix: "put them in a Secret"},
		"AdapterBadRevision":        {xr: adapters(map[string]any{"name": "sql", "uri": "hf://org/sql-lora", "revision": "../main"}), field: "spec.adapters[0].revision", fix: "is not a revision"},
		"AdapterCredentialsOverHTTP": {
			xr:    adapters(map[string]any{"name": "sql", "uri": "http://mirror.internal/sql.safetensors", "credentialsSecretRef": map[string]any{"name": "mirror"}}),
			field: "spec.adapters[0].credentialsSecretRef", fix: "input.policy.plainHTTPCredentialHosts",
		},
		"AdapterCredentialsBadName": {xr: adapters(map[string]any{"name": "sql", "uri": "hf://org/sql-lora", "credentialsSecretRef": map[string]any{"name": "HF_Two"}}), field: "spec.adapters[0].credentialsSecretRef.name", fix: "lower case alphanumeric"},
		"AdapterNoPuller":           {xr: adapters(ad("sql", "s3://bucket/sql")), input: onlyPresets(map[string]any{"adapters": map[string]any{"modulesFlag": "--lora-modules"}}, nil), field: "spec.adapters[0].uri", fix: "offers no puller for s3://"},
		"LoRARankNotAccepted":       {xr: both(adapters(ad("sql", "hf://org/sql-lora")), set(map[string]any{"maxLoraRank": 24}, "spec", "lora")), field: "spec.lora.maxLoraRank", fix: "use one of 1, 8, 16"},
		"LoRAMaxLorasZero":          {xr: both(adapters(ad("sql", "hf://org/sql-lora")), set(map[string]any{"maxLoras": 0}, "spec", "lora")), field: "spec.lora.maxLoras", fix: "use 1 to 64"},
		"LoRAPresetRank":            {xr: adapters(ad("sql", "hf://org/sql-lora")), input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"adapters": map[string]any{"maxLoraRank": 7}}}}, field: "input.runtimes.vllm.adapters.maxLoraRank", fix: "use one of 1, 8, 16"},
		"AdapterEnvReserved":        {xr: both(adapters(ad("sql", "hf://org/sql-lora")), set(map[string]any{"env": []any{map[string]any{"name": "MAX_LORAS", "value": "9"}}}, "spec", "serve")), field: "spec.serve.env[0].name", fix: "is set by the function"},
	}
	// policy is an Input with input.policy set to p.
	policy := func(p map[string]any) map[string]any { return map[string]any{"policy": p} }
	envFrom := set(map[string]any{"env": []any{map[string]any{"name": "DB", "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "db", "key": "password"}}}}}, "spec", "serve")
	policyCases := map[string]struct {
		xr    func(map[string]any)
		input map[string]any
		field string
		fix   string
		taken map[string]map[string]any
	}{
		// The platform's guardrails: each refusal names the claim's field,
		// the limit and the input.policy setting (checked below).
		"PolicyGPUsPerClaim":             {xr: both(set(2, "spec", "resources", "gpu"), set(map[string]any{"min": 3}, "spec", "replicas")), input: policy(map[string]any{"maxGPUsPerClaim": 4}), field: "spec.resources.gpu", fix: "is 6 GPUs, over the limit of 4 GPUs per claim"},
		"PolicyGPUsAutoscalerMax":        {xr: both(set(map[string]any{"min": 1, "max": 8}, "spec", "replicas"), set(map[string]any{"enabled": true}, "spec", "autoscaling")), input: policy(map[string]any{"maxGPUsPerClaim": 4}), field: "spec.resources.gpu", fix: "on up to 8 servers"},
		"PolicyGPUsEveryVersion":         {xr: both(set(map[string]any{"min": 2}, "spec", "replicas"), traffic(tv("1", 80, ""), tv("2", 10, "hf://org/v2"), tv("3", 10, "hf://org/v3"))), input: policy(map[string]any{"maxGPUsPerClaim": 2}), field: "spec.resources.gpu", fix: "on up to 3 servers (every version"},
		"PolicyAdapterScheme":            {xr: adapters(ad("sql", "s3://bucket/sql")), input: policy(map[string]any{"allowedURISchemes": []any{"hf"}}), field: "spec.adapters[0].uri", fix: "not among the schemes the platform allows"},
		"PolicyAdapterHost":              {xr: adapters(ad("sql", "hf://elsewhere/sql")), input: policy(map[string]any{"allowedURIHosts": []any{"hf://meta-llama"}}), field: "spec.adapters[0].uri", fix: "not among the sources the platform allows"},
		"PolicyGPUsNodes":                {xr: both(set(2, "spec", "nodes"), set(8, "spec", "resources", "gpu"), set("ReadWriteMany", "spec", "storage", "accessMode")), input: policy(map[string]any{"maxGPUsPerClaim": 8}), field: "spec.nodes", fix: "is 16 GPUs, over the limit of 8 GPUs per claim"},
		"PolicyReplicasMin":              {xr: set(map[string]any{"min": 5}, "spec", "replicas"), input: policy(map[string]any{"maxReplicas": 4}), field: "spec.replicas.min", fix: "over the limit of 4"},
		"PolicyReplicasMax":              {xr: both(set(map[string]any{"min": 1, "max": 10}, "spec", "replicas"), set(map[string]any{"enabled": true}, "spec", "autoscaling")), input: policy(map[string]any{"maxReplicas": 4}), field: "spec.replicas.max", fix: "over the limit of 4"},
		"PolicyCPU":                      {xr: set("64", "spec", "resources", "cpu"), input: policy(map[string]any{"maxCPUPerServer": "16"}), field: "spec.resources.cpu", fix: "request at most 16"},
		"PolicyCPUInputDefault":          {input: map[string]any{"resources": map[string]any{"cpu": "32"}, "policy": map[string]any{"maxCPUPerServer": "16"}}, field: "input.resources.cpu", fix: "request at most 16"},
		"PolicyMemory":                   {xr: set("512Gi", "spec", "resources", "memory"), input: policy(map[string]any{"maxMemoryPerServer": "128Gi"}), field: "spec.resources.memory", fix: "request at most 128Gi"},
		"PolicyMemoryInputDefault":       {input: map[string]any{"resources": map[string]any{"memory": "256Gi"}, "policy": map[string]any{"maxMemoryPerServer": "128Gi"}}, field: "input.resources.memory", fix: "request at most 128Gi"},
		"PolicyStorageSize":              {xr: set("2Ti", "spec", "storage", "size"), input: policy(map[string]any{"maxStorageSize": "1Ti"}), field: "spec.storage.size", fix: "request at most 1Ti"},
		"PolicyStorageSizeInputDefault":  {input: policy(map[string]any{"maxStorageSize": "10Gi"}), field: "input.storage.size", fix: "request at most 10Gi"},
		"PolicyStorageClass":             {xr: set("premium", "spec", "storage", "storageClassName"), input: policy(map[string]any{"allowedStorageClasses": []any{"standard"}}), field: "spec.storage.storageClassName", fix: "use one of them"},
		"PolicyStorageClassUnset":        {input: policy(map[string]any{"allowedStorageClasses": []any{"standard"}}), field: "spec.storage.storageClassName", fix: "set one of them"},
		"PolicyStorageClassInputDefault": {input: map[string]any{"storage": map[string]any{"storageClassName": "premium"}, "policy": map[string]any{"allowedStorageClasses": []any{"standard"}}}, field: "input.storage.storageClassName", fix: "must make them agree"},
		"PolicyServerImage":              {xr: set("docker.io/evil/miner:1", "spec", "serve", "image"), input: policy(map[string]any{"allowedServerImages": []any{"registry.internal/"}}), field: "spec.serve.image", fix: "use one of them"},
		"PolicyServerImageLookalike":     {xr: set("docker.io/vllm/vllm-openai-evil:1", "spec", "serve", "image"), input: policy(map[string]any{"allowedServerImages": []any{"docker.io/vllm/vllm-openai"}}), field: "spec.serve.image", fix: "use one of them"},
		"PolicyServerImagePreset":        {input: policy(map[string]any{"allowedServerImages": []any{"registry.internal/"}}), field: "input.runtimes.vllm.image", fix: "pin the preset to an allowed image"},
		"PolicyURIScheme":                {xr: model("uri", "s3://bucket/llama"), input: policy(map[string]any{"allowedURISchemes": []any{"hf"}}), field: "spec.model.uri", fix: "pull from one of them"},
		"PolicyURIHost":                  {xr: model("uri", "hf://evil/llama"), input: policy(map[string]any{"allowedURIHosts": []any{"hf://meta-llama"}}), field: "spec.model.uri", fix: "hf://evil is not among the sources"},
		"PolicyURIHostSubdomain":         {xr: model("uri", "https://models.internal.evil.com/m.gguf"), input: policy(map[string]any{"allowedURIHosts": []any{"https://*.models.internal"}}), field: "spec.model.uri", fix: "is not among the sources"},
		"PolicyCanaryURIHost":            {xr: traffic(tv("1", 90, ""), tv("2", 10, "https://mirror.example.com/v2.gguf")), input: policy(map[string]any{"allowedURIHosts": []any{"hf://*"}}), field: "spec.traffic[1].uri", fix: "is not among the sources"},
		"PolicyPVC":                      {xr: model("uri", "pvc://shared/llama"), input: policy(map[string]any{"allowPVCURIs": false}), field: "spec.model.uri", fix: "input.policy.allowPVCURIs: false"},
		"PolicyEnvValueFrom":             {xr: envFrom, input: policy(map[string]any{"allowEnvValueFrom": false}), field: "spec.serve.env[0].valueFrom", fix: "set a value"},
		// Credentials: only the Secrets the platform lists, wherever a
		// claim names one (labels: TestCredentialSecretSelector).
		"PolicyCredentialSecret":        {xr: model("credentialsSecretRef", map[string]any{"name": "hf-credentials"}), input: policy(map[string]any{"allowedCredentialSecrets": []any{"hf-team"}}), field: "spec.model.credentialsSecretRef.name", fix: "name one of them, or ask your platform team to list it"},
		"PolicyCredentialSecretCanary":  {xr: traffic(tv("1", 90, ""), map[string]any{"version": "2", "weight": 10, "uri": "hf://meta-llama/Llama-3.2-3B-Instruct", "credentialsSecretRef": map[string]any{"name": "other-team-hf"}}), input: policy(map[string]any{"allowedCredentialSecrets": []any{"hf-credentials"}}), field: "spec.traffic[1].credentialsSecretRef.name", fix: "input.policy.allowedCredentialSecrets: hf-credentials"},
		"PolicyCredentialSecretAdapter": {xr: adapters(map[string]any{"name": "support", "uri": "https://models.example.com/support.safetensors", "credentialsSecretRef": map[string]any{"name": "db-password", "key": "password"}}), input: policy(map[string]any{"allowedCredentialSecrets": []any{"hf-credentials"}}), field: "spec.adapters[0].credentialsSecretRef.name", fix: "input.policy.allowedCredentialSecrets"},
	}
	// Hosts compared as hosts (internal/resolve/host.go): each trick that
	// makes a URI's text say an allowed host while curl reaches another is
	// refused, by the host curl reaches or as a URI whose host is
	// ambiguous, and the refusal names input.policy.allowedURIHosts
	// (checked below).
	hosts := policy(map[string]any{"allowedURIHosts": []any{"hf://*", "s3://models", "https://*.allowed.test", "http://*.allowed.test"}})
	notAmong := func(origin string) string { return origin + " is not among the sources the platform allows" }
	hostCases := map[string]struct {
		uri, fix string
	}{
		"Query":           {uri: "https://evil.test?@a.allowed.test/m.gguf", fix: notAmong("https://evil.test")},
		"QueryDot":        {uri: "https://evil.test?.allowed.test/m.gguf", fix: notAmong("https://evil.test")},
		"Fragment":        {uri: "https://evil.test#@a.allowed.test/m.gguf", fix: notAmong("https://evil.test")},
		"FragmentDot":     {uri: "http://evil.test#.allowed.test/m.gguf", fix: notAmong("http://evil.test")},
		"Userinfo":        {uri: "https://a.allowed.test@evil.test/m.gguf", fix: "put them in a Secret and set spec.model.credentialsSecretRef"},
		"UserinfoPort":    {uri: "https://a.allowed.test:443@evil.test/m.gguf", fix: "put them in a Secret and set spec.model.credentialsSecretRef"},
		"UserinfoAllowed": {uri: "https://user@a.allowed.test/m.gguf", fix: "put them in a Secret and set spec.model.credentialsSecretRef"},
		"BackslashAt":     {uri: `https://evil.test\@a.allowed.test/m.gguf`, fix: "contains a space, control character or backslash"},
		"BackslashDot":    {uri: `https://evil.test\.allowed.test/m.gguf`, fix: "contains a space, control character or backslash"},
		"Tab":             {uri: "https://evil.test\t.allowed.test/m.gguf", fix: "contains a space, control character or backslash"},
		"Newline":         {uri: "https://evil.test\n.allowed.test/m.gguf", fix: "contains a space, control character or backslash"},
		"PercentDot":      {uri: "https://a.allowed.test%2eevil.test/m.gguf", fix: "write https://host[:port]/path"},
		"PercentAt":       {uri: "https://evil.test%40a.allowed.test/m.gguf", fix: "write https://host[:port]/path"},
		"Semicolon":       {uri: "https://evil.test;.allowed.test/m.gguf", fix: "is not a host name"},
		"Suffix":          {uri: "https://a.allowed.test.evil.test/m.gguf", fix: notAmong("https://a.allowed.test.evil.test")},
		"TwoTrailingDots": {uri: "https://a.allowed.test../m.gguf", fix: "is not a host name"},
		"OtherPort":       {uri: "https://a.allowed.test:8443/m.gguf", fix: notAmong("https://a.allowed.test:8443")},
		"IPv6":            {uri: "https://[::1]/m.gguf", fix: notAmong("https://[::1]")},
		"IPv4Mapped":      {uri: "https://[::ffff:127.0.0.1]/m.gguf", fix: "write the IPv4 address 127.0.0.1 instead"},
		"IPv6Zone":        {uri: "https://[fe80::1%25lo]/m.gguf", fix: "write https://host[:port]"},
		"IPv4":            {uri: "https://127.0.0.1/m.gguf", fix: notAmong("https://127.0.0.1")},
		"IPv4Hex":         {uri: "https://0x7f.1/m.gguf", fix: "write it as four decimal numbers"},
		"IPv4Decimal":     {uri: "https://2130706433/m.gguf", fix: "write it as four decimal numbers"},
		"IPv4Octal":       {uri: "https://0177.0.0.1/m.gguf", fix: "write it as four decimal numbers"},
		"IPv4Short":       {uri: "https://127.1/m.gguf", fix: "write it as four decimal numbers"},
		"NonASCII":        {uri: "https://évil.allowed.test/m.gguf", fix: "write its ASCII (punycode, xn--) form"},
		"BadPort":         {uri: "https://a.allowed.test:99999/m.gguf", fix: "use a port from 1 to 65535"},
		"BucketNotAName":  {uri: "s3://models:evil/llama", fix: "is not a bucket name"},
		"BucketUpperCase": {uri: "s3://Models/llama", fix: "is not a bucket name"},
		"BucketFragment":  {uri: "s3://models#x/llama", fix: "is not a bucket name"},
	}
	for name, hc := range hostCases {
		policyCases["PolicyHost"+name] = struct {
			xr    func(map[string]any)
			input map[string]any
			field string
			fix   string
			taken map[string]map[string]any
		}{xr: model("uri", hc.uri), input: hosts, field: "spec.model.uri", fix: hc.fix}
	}
	policyCases["PolicyHostCanaryFragment"] = struct {
		xr    func(map[string]any)
		input map[string]any
		field string
		fix   string
		taken map[string]map[string]any
	}{xr: traffic(tv("1", 90, ""), tv("2", 10, "https://evil.test#.allowed.test/v2.gguf")), input: hosts, field: "spec.traffic[1].uri", fix: notAmong("https://evil.test")}
	policyCases["PolicyHostAdapterUserinfo"] = struct {
		xr    func(map[string]any)
		input map[string]any
		field string
		fix   string
		taken map[string]map[string]any
	}{xr: adapters(ad("sql", "https://a.allowed.test@evil.test/sql.safetensors")), input: hosts, field: "spec.adapters[0].uri", fix: "put them in a Secret and set spec.adapters[0].credentialsSecretRef"}
	// Server overrides under policy: variables that would turn hub access
	// or run-time adapter loading back on are refused by name, whatever
	// the policy; input.policy.deniedServeArgs (by default
	// --trust-remote-code) in every spelling a runtime reads.
	for name, v := range map[string]string{
		"HubOffline": "HF_HUB_OFFLINE", "TransformersOffline": "TRANSFORMERS_OFFLINE", "HubEndpoint": "HF_ENDPOINT",
		"HubToken": "HF_TOKEN", "ModelScope": "VLLM_USE_MODELSCOPE", "RuntimeLoRA": "VLLM_ALLOW_RUNTIME_LORA_UPDATING",
		"LoRAResolver": "VLLM_PLUGINS", "OllamaStore": "OLLAMA_MODELS",
	} {
		cases["ServeEnv"+name] = struct {
			xr    func(map[string]any)
			input map[string]any
			field string
			fix   string
			taken map[string]map[string]any
		}{xr: set(map[string]any{"env": []any{map[string]any{"name": "LOG_LEVEL", "value": "debug"}, map[string]any{"name": v, "value": "0"}}}, "spec", "serve"), field: "spec.serve.env[1].name", fix: "sets it in its runtime preset, input.runtimes.<framework>.env"}
	}
	serveArgs := func(args ...any) func(map[string]any) { return set(map[string]any{"args": args}, "spec", "serve") }
	somePolicy := policy(map[string]any{"maxReplicas": 8})
	for name, tc := range map[string]struct {
		xr    func(map[string]any)
		input map[string]any
		field string
	}{
		"TrustRemoteCode":           {xr: serveArgs("--model=$(MODEL_DIR)", "--trust-remote-code"), input: somePolicy, field: "spec.serve.args[1]"},
		"TrustRemoteCodeValue":      {xr: serveArgs("--trust-remote-code=true"), input: somePolicy, field: "spec.serve.args[0]"},
		"TrustRemoteCodeUnderscore": {xr: serveArgs("--port=$(PORT)", "--trust_remote_code"), input: somePolicy, field: "spec.serve.args[1]"},
		"TrustRemoteCodeAbbrev":     {xr: serveArgs("--trust-remote"), input: somePolicy, field: "spec.serve.args[0]"},
		"TrustRemoteCodeInScript":   {xr: serveArgs("exec vllm serve \"$MODEL_DIR\" --trust-remote-code"), input: somePolicy, field: "spec.serve.args[0]"},
		"Listed":                    {xr: serveArgs("--model=$(MODEL_DIR)", "--enable-lora"), input: policy(map[string]any{"deniedServeArgs": []any{"--enable-lora"}}), field: "spec.serve.args[1]"},
		"Every":                     {xr: serveArgs("--model=$(MODEL_DIR)"), input: policy(map[string]any{"deniedServeArgs": []any{"*"}}), field: "spec.serve.args[0]"},
	} {
		policyCases["PolicyServeArg"+name] = struct {
			xr    func(map[string]any)
			input map[string]any
			field string
			fix   string
			taken map[string]map[string]any
		}{xr: tc.xr, input: tc.input, field: tc.field, fix: "which the platform does not allow (input.policy.deniedServeArgs: "}
	}
	// What the server receives (resolve/serveargs.go): arguments after the
	// kubelet's $(VAR) expansion, variables by the names the server reads
	// them under, the runtime's flag table, input.policy.allowedServeEnv.
	env := func(vars ...map[string]any) []any {
		out := make([]any, len(vars))
		for i, v := range vars {
			out[i] = v
		}
		return out
	}
	v := func(name, value string) map[string]any { return map[string]any{"name": name, "value": value} }
	secretVar := func(name string) map[string]any {
		return map[string]any{"name": name, "valueFrom": map[string]any{"secretKeyRef": map[string]any{"name": "s", "key": "k"}}}
	}
	serve := func(sv map[string]any) func(map[string]any) { return set(sv, "spec", "serve") }
	framework := func(fw string) func(map[string]any) { return set(fw, "spec", "model", "framework") }
	strict := policy(map[string]any{"allowedServerImages": []any{"vllm/", "ghcr.io/"}, "deniedServeArgs": []any{"--trust-remote-code"}})
	type row = struct {
		xr    func(map[string]any)
		input map[string]any
		field string
		fix   string
		taken map[string]map[string]any
	}
	for name, tc := range map[string]row{
		// Class 1: a denied flag by another route than the args as written.
		"PolicyServeArgExpandsToDenied": {xr: serve(map[string]any{"env": env(v("HALF", "trust-remote")), "args": []any{"--model=$(MODEL_DIR)", "--$(HALF)-code"}}), input: strict, field: "spec.serve.args[1]", fix: `(which the server receives as "--trust-remote-code") passes --trust-remote-code, which the platform does not allow (input.policy.deniedServeArgs`},
		"PolicyServeArgWholeFromVar":    {xr: serve(map[string]any{"env": env(v("F", "--trust-remote-code")), "args": []any{"$(F)"}}), input: strict, field: "spec.serve.args[0]", fix: "input.policy.deniedServeArgs"},
		"PolicyServeArgHiddenFlag":      {xr: serve(map[string]any{"env": env(secretVar("F")), "args": []any{"--model=$(MODEL_DIR)", "$(F)"}}), input: strict, field: "spec.serve.args[1]", fix: "write the flag and the reference in one argument (--flag=$(F))"},
		"PolicyServeArgHiddenFlagName":  {xr: serve(map[string]any{"env": env(secretVar("F")), "args": []any{"--trust-$(F)=1"}}), input: strict, field: "spec.serve.args[0]", fix: "input.policy.deniedServeArgs) cannot judge it"},
		"PolicyServeEnvTGIFlagVariable": {xr: both(framework("tgi"), serve(map[string]any{"env": env(v("TRUST_REMOTE_CODE", "true"))})), input: policy(map[string]any{"allowedServeEnv": []any{"*"}}), field: "spec.serve.env[0].name", fix: "is the tgi server's variable for --trust-remote-code, which the platform does not allow (input.policy.deniedServeArgs"},
		"PolicyServeEnvLlamaFlagVar":    {xr: both(framework("llamacpp"), serve(map[string]any{"env": env(v("LLAMA_ARG_CTX_SIZE", "512"))})), input: strict, field: "spec.serve.env[0].name", fix: "ask your platform team to list the variable in input.policy.allowedServeEnv"},
		"PolicyServeArgVLLMConfigFile":  {xr: serve(map[string]any{"args": []any{"--model=$(MODEL_DIR)", "--config=$(MODEL_DIR)/args.yaml"}}), input: strict, field: "spec.serve.args[1]", fix: "the vllm runtime's flag table (input.runtimes.vllm.flags) refuses it"},
		"PolicyServeArgSGLangLogitCode": {xr: both(framework("sglang"), serve(map[string]any{"args": []any{"--model-path=$(MODEL_DIR)", "--enable-custom-logit-processor"}})), input: strict, field: "spec.serve.args[1]", fix: "lets every client send Python code"},
		"PolicyServeArgSGLangConfig":    {xr: both(framework("sglang"), serve(map[string]any{"args": []any{"--config=$(MODEL_DIR)/serve.yaml"}})), input: strict, field: "spec.serve.args[0]", fix: "the sglang runtime's flag table (input.runtimes.sglang.flags) refuses it"},
		"PolicyServeEnvSGLangVariable":  {xr: both(framework("sglang"), serve(map[string]any{"env": env(v("SGLANG_ENABLE_TORCH_COMPILE", "1"))})), input: strict, field: "spec.serve.env[0].name", fix: "is a variable the sglang server reads its flags from"},
		"PolicyServeArgVLLMPlugin":      {xr: serve(map[string]any{"args": []any{"--worker-extension-cls", "evil.Worker"}}), input: strict, field: "spec.serve.args[0]", fix: "imports Python code by name"},
		"PolicyServeArgLlamaTools":      {xr: both(framework("llamacpp"), serve(map[string]any{"args": []any{"--tools", "all"}})), input: strict, field: "spec.serve.args[0]", fix: "runs tools (shell commands"},
		// Class 2: variables that load or run code.
		"PolicyServeEnvLDPreload":      {xr: serve(map[string]any{"env": env(v("LD_PRELOAD", "/model/x.so"))}), input: policy(map[string]any{"allowedServerImages": []any{"vllm/"}, "deniedServeArgs": []any{"*"}}), field: "spec.serve.env[0].name", fix: "(matching LD_*) can make a process load or run code"},
		"PolicyServeEnvPythonPath":     {xr: serve(map[string]any{"env": env(v("OK", "1"), v("PYTHONPATH", "/model"))}), input: strict, field: "spec.serve.env[1].name", fix: "input.policy.allowedServeEnv is not set"},
		"PolicyServeEnvPath":           {xr: both(framework("llamacpp"), serve(map[string]any{"env": env(v("PATH", "/model/bin"))})), input: strict, field: "spec.serve.env[0].name", fix: "input.policy.allowedServeEnv"},
		"PolicyServeEnvBashEnv":        {xr: both(framework("llamacpp"), serve(map[string]any{"env": env(v("BASH_ENV", "/model/x"))})), input: strict, field: "spec.serve.env[0].name", fix: "(matching BASH_ENV)"},
		"PolicyServeEnvNotInAllowList": {xr: serve(map[string]any{"env": env(v("VLLM_LOGGING_LEVEL", "DEBUG"), v("OTHER", "1"))}), input: policy(map[string]any{"allowedServeEnv": []any{"VLLM_LOGGING_LEVEL"}}), field: "spec.serve.env[1].name", fix: "is not among the variables the platform allows (input.policy.allowedServeEnv: VLLM_LOGGING_LEVEL)"},
		"PolicyServeEnvNoneAllowed":    {xr: serve(map[string]any{"env": env(v("X", "1"))}), input: policy(map[string]any{"allowedServeEnv": []any{}}), field: "spec.serve.env[0].name", fix: "(input.policy.allowedServeEnv: none)"},
	} {
		policyCases[name] = tc
	}
	for name, tc := range map[string]row{
		// Class 3: a server that fetches weights by itself, refused with or
		// without a policy; and the preset's own flags.
		"ServeArgLlamaHubRepo":       {xr: both(framework("llamacpp"), serve(map[string]any{"args": []any{"-hf", "evil/model-GGUF"}})), field: "spec.serve.args[0]", fix: "downloads a model from a hub or a URL by itself"},
		"ServeArgLlamaModelURL":      {xr: both(framework("llamacpp"), serve(map[string]any{"args": []any{"--ctx-size", "512", "--model-url", "http://evil.test/m.gguf"}})), field: "spec.serve.args[2]", fix: "servers serve only the weights the function pulls"},
		"ServeArgLlamaDockerRepo":    {xr: both(framework("llamacpp"), serve(map[string]any{"args": []any{"-dr", "ai/smollm2"}})), field: "spec.serve.args[0]", fix: "around the pull and input.policy.allowedURIHosts"},
		"ServeArgLlamaFetchFromVar":  {xr: both(framework("llamacpp"), serve(map[string]any{"env": env(v("U", "-mu")), "args": []any{"$(U)", "http://evil.test/m.gguf"}})), field: "spec.serve.args[0]", fix: `(which the server receives as "-mu") passes -mu`},
		"ServeArgLlamaModel":         {xr: both(framework("llamacpp"), serve(map[string]any{"args": []any{"-m", "/tmp/other.gguf"}})), field: "spec.serve.args[0]", fix: "remove it: the runtime preset sets it"},
		"ServeArgLlamaRPC":           {xr: both(framework("llamacpp"), serve(map[string]any{"args": []any{"--rpc", "10.0.0.1:50052"}})), field: "spec.serve.args[0]", fix: "sends the model to remote RPC servers"},
		"ServeEnvLlamaModelURL":      {xr: both(framework("llamacpp"), serve(map[string]any{"env": env(v("LLAMA_ARG_MODEL_URL", "http://evil.test/m.gguf"))})), field: "spec.serve.env[0].name", fix: "is the llamacpp server's variable for --model-url"},
		"ServeEnvLlamaHFRepo":        {xr: both(framework("llamacpp"), serve(map[string]any{"env": env(v("LLAMA_ARG_HF_REPO", "evil/m"))})), field: "spec.serve.env[0].name", fix: "downloads a model from a hub"},
		"ServeEnvLlamaOffline":       {xr: both(framework("llamacpp"), serve(map[string]any{"env": env(v("LLAMA_ARG_OFFLINE", "0"))})), field: "spec.serve.env[0].name", fix: "llama-server runs with --offline"},
		"ServeEnvOllamaHost":         {xr: both(framework("ollama"), serve(map[string]any{"env": env(v("OLLAMA_HOST", "0.0.0.0:1"))})), field: "spec.serve.env[0].name", fix: "moves the address the preset listens on"},
		"ServeEnvTGILoRAFromHub":     {xr: both(framework("tgi"), serve(map[string]any{"env": env(v("LORA_ADAPTERS", "evil/lora"))})), field: "spec.serve.env[0].name", fix: "loads adapters from the hub at start"},
		"ServeArgTGINgrok":           {xr: both(framework("tgi"), serve(map[string]any{"args": []any{"--model-id=$(MODEL_DIR)", "--ngrok"}})), field: "spec.serve.args[1]", fix: "opens a connection out of the cluster"},
		"InputAllowedServeEnvNoName": {input: policy(map[string]any{"allowedServeEnv": []any{"A*B"}}), field: "input.policy.allowedServeEnv[0]", fix: "list names such as VLLM_LOGGING_LEVEL or prefixes such as FAKE_*"},
		"InputFlagRuleClass":         {input: map[string]any{"runtimes": map[string]any{"vllm": map[string]any{"flags": map[string]any{"rules": []any{map[string]any{"flags": []any{"--x"}, "class": "Nope"}}}}}}, field: "input.runtimes.vllm.flags.rules[0].class", fix: "use Preset, Fetch, Unsafe or Denied"},
	} {
		cases[name] = tc
	}
	cases["InputDeniedServeArgNotAFlag"] = struct {
		xr    func(map[string]any)
		input map[string]any
		field string
		fix   string
		taken map[string]map[string]any
	}{input: policy(map[string]any{"deniedServeArgs": []any{"trust-remote-code"}}), field: "input.policy.deniedServeArgs[0]", fix: "list flags such as --trust-remote-code"}
	for name, tc := range policyCases {
		cases[name] = tc
	}
	// oci:// weights (oci.go): refused unless the Input mounts image
	// volumes, and held to the reference grammar with a registry host.
	const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	ociOn := map[string]any{"oci": map[string]any{"mode": "ImageVolume"}}
	ociPolicy := func(p map[string]any) map[string]any { return map[string]any{"oci": ociOn["oci"], "policy": p} }
	ociCases := map[string]struct {
		xr    func(map[string]any)
		input map[string]any
		field string
		fix   string
		taken map[string]map[string]any
	}{
		"OCIRefusedByDefault":  {xr: model("uri", "oci://registry.example.com/models/llama@"+digest), field: "spec.model.uri", fix: "input.oci.mode: ImageVolume"},
		"OCIRefusedByInput":    {xr: model("uri", "oci://registry.example.com/models/llama@"+digest), input: map[string]any{"oci": map[string]any{"mode": "Refuse"}}, field: "spec.model.uri", fix: "(input.oci.mode: Refuse)"},
		"OCICanaryRefused":     {xr: traffic(tv("1", 90, ""), tv("2", 10, "oci://registry.example.com/models/llama:2")), field: "spec.traffic[1].uri", fix: "ask your platform team to set input.oci.mode: ImageVolume"},
		"OCINoTagNoDigest":     {xr: model("uri", "oci://registry.example.com/models/llama"), input: ociOn, field: "spec.model.uri", fix: "an implicit :latest would change under the servers"},
		"OCINoRepository":      {xr: model("uri", "oci://registry.example.com:5000"), input: ociOn, field: "spec.model.uri", fix: "names no repository"},
		"OCINoRegistry":        {xr: model("uri", "oci://models/llama:1"), input: ociOn, field: "spec.model.uri", fix: "e.g. docker.io/models"},
		"OCIBadPort":           {xr: model("uri", "oci://registry.example.com:99999/llama:1"), input: ociOn, field: "spec.model.uri", fix: "use a port from 1 to 65535"},
		"OCIIPv6":              {xr: model("uri", "oci://[::1]:5000/llama:1"), input: ociOn, field: "spec.model.uri", fix: "IPv6 literals are not supported"},
		"OCIBadHost":           {xr: model("uri", "oci://-bad-.example.com/llama:1"), input: ociOn, field: "spec.model.uri", fix: "is not a host name"},
		"OCIUppercaseRepo":     {xr: model("uri", "oci://registry.example.com/Models/Llama:1"), input: ociOn, field: "spec.model.uri", fix: "must be lowercase letters and digits"},
		"OCIEmptyComponent":    {xr: model("uri", "oci://registry.example.com/models//llama:1"), input: ociOn, field: "spec.model.uri", fix: `repository component ""`},
		"OCIBadTag":            {xr: model("uri", "oci://registry.example.com/llama:-x"), input: ociOn, field: "spec.model.uri", fix: "is not a tag"},
		"OCILongTag":           {xr: model("uri", "oci://registry.example.com/llama:"+strings.Repeat("t", 129)), input: ociOn, field: "spec.model.uri", fix: "use at most 128 letters"},
		"OCIShortDigest":       {xr: model("uri", "oci://registry.example.com/llama@sha256:abc"), input: ociOn, field: "spec.model.uri", fix: "64 lowercase hex digits"},
		"OCIUppercaseDigest":   {xr: model("uri", "oci://registry.example.com/llama@"+strings.ToUpper(digest)), input: ociOn, field: "spec.model.uri", fix: "is not a sha256 digest"},
		"OCISHA512":            {xr: model("uri", "oci://registry.example.com/llama@sha512:"+strings.Repeat("a", 128)), input: ociOn, field: "spec.model.uri", fix: "is not a sha256 digest"},
		"OCINameTooLong":       {xr: model("uri", "oci://registry.example.com/"+strings.Repeat("a/", 127)+"b:1"), input: ociOn, field: "spec.model.uri", fix: "at most 255 are allowed"},
		"OCIRevision":          {xr: both(model("uri", "oci://registry.example.com/llama@"+digest), model("revision", "main")), input: ociOn, field: "spec.model.revision", fix: "pinned by their digest"},
		"OCISecretKey":         {xr: both(model("uri", "oci://registry.example.com/llama@"+digest), model("credentialsSecretRef", map[string]any{"name": "regcred", "key": ".dockerconfigjson"})), input: ociOn, field: "spec.model.credentialsSecretRef.key", fix: "remove the key"},
		"OCICanarySecretKey":   {xr: traffic(tv("1", 90, ""), map[string]any{"version": "2", "weight": 10, "uri": "oci://registry.example.com/llama:2", "credentialsSecretRef": map[string]any{"name": "regcred", "key": "x"}}), input: ociOn, field: "spec.traffic[1].credentialsSecretRef.key", fix: "remove the key"},
		"OCICanaryRevision":    {xr: traffic(tv("1", 90, ""), map[string]any{"version": "2", "weight": 10, "uri": "oci://registry.example.com/llama:2", "revision": "main"}), input: ociOn, field: "spec.traffic[1].revision", fix: "pinned by their digest"},
		"OCICacheRef":          {xr: both(model("uri", "oci://registry.example.com/llama@"+digest), model("cacheRef", map[string]any{"name": "llama"})), input: ociOn, field: "spec.model.uri", fix: "remove spec.model.cacheRef or the oci:// uri"},
		"PolicyOCIScheme":      {xr: model("uri", "oci://registry.example.com/llama@"+digest), input: ociPolicy(map[string]any{"allowedURISchemes": []any{"hf"}}), field: "spec.model.uri", fix: "oci:// is not among the schemes the platform allows (input.policy.allowedURISchemes"},
		"PolicyOCIHost":        {xr: model("uri", "oci://ghcr.io/evil/llama@"+digest), input: ociPolicy(map[string]any{"allowedURIHosts": []any{"oci://registry.internal", "oci://*.models.internal"}}), field: "spec.model.uri", fix: "oci://ghcr.io is not among the sources"},
		"PolicyOCIHostPort":    {xr: model("uri", "oci://registry.internal:5000/llama@"+digest), input: ociPolicy(map[string]any{"allowedURIHosts": []any{"oci://registry.internal"}}), field: "spec.model.uri", fix: "oci://registry.internal:5000 is not among the sources"},
		"PolicyOCIPullSecret":  {xr: both(model("uri", "oci://registry.example.com/llama@"+digest), model("credentialsSecretRef", map[string]any{"name": "ci-push-token"})), input: ociPolicy(map[string]any{"allowedCredentialSecrets": []any{"regcred"}}), field: "spec.model.credentialsSecretRef.name", fix: "input.policy.allowedCredentialSecrets: regcred"},
		"PolicyOCICanaryHost":  {xr: traffic(tv("1", 90, ""), tv("2", 10, "oci://ghcr.io/evil/llama:2")), input: ociPolicy(map[string]any{"allowedURIHosts": []any{"hf://*", "oci://registry.internal"}}), field: "spec.traffic[1].uri", fix: "is not among the sources"},
		"InputOCIModeMisspelt": {input: map[string]any{"oci": map[string]any{"mod": "ImageVolume"}}, field: "mod", fix: "check the Composition's function Input against its schema"},
	}
	for name, tc := range ociCases {
		cases[name] = tc
		if strings.HasPrefix(name, "Policy") {
			policyCases[name] = tc
		}
	}
	if len(cases) < 30 {
		t.Fatalf("the catalogue has %d cases; keep at least 30", len(cases))
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := testXR()
			if tc.xr != nil {
				tc.xr(xr)
			}
			rsp := run(t, withServices(t, newRequest(t, xr, tc.input), tc.taken))

			var fatals []*fnv1.Result
			for _, r := range rsp.GetResults() {
				if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
					fatals = append(fatals, r)
				}
			}
			if len(fatals) != 1 {
				t.Fatalf("want one Fatal result, got %d: %v", len(fatals), rsp.GetResults())
			}
			msg := fatals[0].GetMessage()
			type verdict struct {
				NamesField, SuggestsFix bool
				Target                  fnv1.Target
				Desired                 []string
				Conditions              int
			}
			want := verdict{NamesField: true, SuggestsFix: true, Target: toBoth}
			got := verdict{
				NamesField:  strings.Contains(msg, tc.field+":") || strings.Contains(msg, tc.field+" ") || strings.Contains(msg, `"`+tc.field+`"`),
				SuggestsFix: strings.Contains(msg, tc.fix),
				Target:      fatals[0].GetTarget(),
				Desired:     desiredNames(rsp),
				Conditions:  len(rsp.GetConditions()),
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Fatal result (-want +got):\n%s\nmessage: %s", diff, msg)
			}
			// A guardrail's refusal says the platform set it, and where.
			if _, ok := policyCases[name]; ok && (!strings.Contains(msg, "input.policy.") || !strings.Contains(msg, "platform")) {
				t.Errorf("the refusal does not say that the platform set the limit (input.policy.*): %s", msg)
			}
			if strings.HasPrefix(name, "PolicyHost") && !strings.Contains(msg, "input.policy.allowedURIHosts") {
				t.Errorf("the refusal does not name the platform's host allow-list (input.policy.allowedURIHosts): %s", msg)
			}
		})
	}
}

// TestBadInputKeepsNothing: a claim that turns bad after its objects exist
// still gets no desired resources from this step (Crossplane keeps the
// last applied state while a function returns Fatal, and deletes nothing).
func TestBadInputKeepsNothing(t *testing.T) {
	xr := testXR()
	obs := serving(t, xr, nil, 1, deploymentStatus(1, 1))
	setPath(xr, "ftp://x/y", "spec", "model", "uri")
	rsp := run(t, newRequest(t, xr, nil, obs...))
	if msg := fatalMessage(rsp); !strings.Contains(msg, "spec.model.uri") {
		t.Fatalf("fatal message %q does not name spec.model.uri", msg)
	}
	if diff := cmp.Diff([]string(nil), desiredNames(rsp)); diff != "" {
		t.Errorf("desired (-want +got):\n%s", diff)
	}
}

// TestBadModelCache is the catalogue of ModelCaches the function refuses,
// each with the field its Fatal names and the fix it suggests.
func TestBadModelCache(t *testing.T) {
	cases := map[string]struct {
		edit       func(map[string]any)
		input      map[string]any
		field, fix string
	}{
		"PolicyStorageSize":  {edit: func(x map[string]any) { setPath(x, "2Ti", "spec", "storage", "size") }, input: map[string]any{"policy": map[string]any{"maxStorageSize": "1Ti"}}, field: "spec.storage.size", fix: "input.policy.maxStorageSize"},
		"PolicyStorageClass": {edit: func(x map[string]any) { setPath(x, "premium", "spec", "storage", "storageClassName") }, input: map[string]any{"policy": map[string]any{"allowedStorageClasses": []any{"standard"}}}, field: "spec.storage.storageClassName", fix: "input.policy.allowedStorageClasses"},
		"PolicyURIScheme":    {edit: func(x map[string]any) {}, input: map[string]any{"policy": map[string]any{"allowedURISchemes": []any{"s3"}}}, field: "spec.uri", fix: "input.policy.allowedURISchemes"},
		"PolicyURIHost":      {edit: func(x map[string]any) {}, input: map[string]any{"policy": map[string]any{"allowedURIHosts": []any{"hf://mistralai"}}}, field: "spec.uri", fix: "input.policy.allowedURIHosts"},
		"PVCURI":             {edit: func(x map[string]any) { setPath(x, "pvc://shared/llama", "spec", "uri") }, field: "spec.uri", fix: "already live in a volume"},
		"OCIURI": {edit: func(x map[string]any) {
			setPath(x, "oci://registry.example.com/llama:1", "spec", "uri")
		}, input: map[string]any{"oci": map[string]any{"mode": "ImageVolume"}}, field: "spec.uri", fix: "serve them with an InferenceService's spec.model.uri"},
		"FTPURI":                 {edit: func(x map[string]any) { setPath(x, "ftp://x/y", "spec", "uri") }, field: "spec.uri", fix: "use hf://"},
		"DuplicateRevision":      {edit: func(x map[string]any) { setPath(x, []any{"main", "main"}, "spec", "revisions") }, field: "spec.revisions[1]", fix: "list each revision once"},
		"EmptyRevision":          {edit: func(x map[string]any) { setPath(x, []any{"main", ""}, "spec", "revisions") }, field: "spec.revisions[1]", fix: "leave spec.revisions out to pull the default"},
		"BadRevision":            {edit: func(x map[string]any) { setPath(x, []any{"../x"}, "spec", "revisions") }, field: "spec.revisions[0]", fix: "use a branch, tag, commit"},
		"BadSecret":              {edit: func(x map[string]any) { setPath(x, map[string]any{"name": "HF_X"}, "spec", "credentialsSecretRef") }, field: "spec.credentialsSecretRef.name", fix: "lower case alphanumeric"},
		"BadAccessMode":          {edit: func(x map[string]any) { setPath(x, "ReadOnlyMany", "spec", "storage", "accessMode") }, field: "spec.storage.accessMode", fix: "use ReadWriteOnce or ReadWriteMany"},
		"NameLeadingDigit":       {edit: func(x map[string]any) { setPath(x, "1llama", "metadata", "labels", resolve.LabelClaimName) }, field: "metadata.name", fix: "rename the ModelCache"},
		"PolicyURIHostFragment":  {edit: func(x map[string]any) { setPath(x, "https://evil.test#.allowed.test/m.gguf", "spec", "uri") }, input: map[string]any{"policy": map[string]any{"allowedURIHosts": []any{"https://*.allowed.test"}}}, field: "spec.uri", fix: "https://evil.test is not among the sources the platform allows (input.policy.allowedURIHosts"},
		"PolicyURIUserinfo":      {edit: func(x map[string]any) { setPath(x, "https://a.allowed.test@evil.test/m.gguf", "spec", "uri") }, input: map[string]any{"policy": map[string]any{"allowedURIHosts": []any{"https://*.allowed.test"}}}, field: "spec.uri", fix: "put them in a Secret and set spec.credentialsSecretRef"},
		"PolicyCredentialSecret": {edit: func(x map[string]any) {}, input: map[string]any{"policy": map[string]any{"allowedCredentialSecrets": []any{"hf-cache"}}}, field: "spec.credentialsSecretRef.name", fix: "input.policy.allowedCredentialSecrets: hf-cache"},
		"S3CredentialsKey": {edit: func(x map[string]any) {
			setPath(x, "s3://models/llama", "spec", "uri")
			setPath(x, map[string]any{"name": "aws", "key": "HTTPS_PROXY"}, "spec", "credentialsSecretRef")
		}, field: "spec.credentialsSecretRef.key", fix: "remove the key"},
		"PlainHTTPCredentials": {edit: func(x map[string]any) {
			setPath(x, "http://mirror.internal/llama.gguf", "spec", "uri")
			setPath(x, map[string]any{"name": "mirror"}, "spec", "credentialsSecretRef")
		}, field: "spec.credentialsSecretRef", fix: "input.policy.plainHTTPCredentialHosts"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			xr := readYAML(t, "../examples/modelcache/xr.yaml")
			tc.edit(xr)
			rsp := run(t, newRequest(t, xr, tc.input))
			msg := fatalMessage(rsp)
			if !strings.Contains(msg, tc.field+":") || !strings.Contains(msg, tc.fix) {
				t.Errorf("Fatal %q does not name %s with the fix %q", msg, tc.field, tc.fix)
			}
			if len(desiredNames(rsp)) != 0 {
				t.Errorf("desired %v for a refused ModelCache", desiredNames(rsp))
			}
		})
	}
}

// spoofedNamespaced is xr as a namespaced (Crossplane v2) InferenceService
// innocent in team-a whose author labelled it as team-b's claim llama.
func spoofedNamespaced(xr map[string]any) map[string]any {
	xr["apiVersion"] = "inference.inferno.dev/v1alpha1"
	xr["kind"] = "InferenceService"
	xr["metadata"] = map[string]any{
		"name": "innocent", "namespace": "team-a",
		"labels": map[string]any{resolve.LabelClaimName: "llama", resolve.LabelClaimNamespace: "team-b"},
	}
	delete(xr["spec"].(map[string]any), "claimRef")
	delete(xr["spec"].(map[string]any), "compositionRef")
	return xr
}

// TestBadInputSpoofedClaimLabels: a namespaced InferenceService cannot
// take another team's identity by writing Crossplane's claim labels. It is
// not refused (the labels are ignored, with a warning), and everything
// stays its own: every object is in team-a and named after innocent, the
// HTTPRoute's hostname and status.url/routeURL are innocent's in team-a,
// and the ModelCache it names is looked up in team-a.
func TestBadInputSpoofedClaimLabels(t *testing.T) {
	t.Run("split routed through a Gateway", func(t *testing.T) {
		xr := spoofedNamespaced(canaryXR(t))
		rsp, _ := settle(t, xr, gatewayInput(t), world{RouteState: "accepted"}, nil)
		type placement struct{ Namespace, NamedAfter string }
		want, got := map[string]placement{}, map[string]placement{}
		for rn, r := range rsp.GetDesired().GetResources() {
			md, _ := r.GetResource().AsMap()["metadata"].(map[string]any)
			name, _ := md["name"].(string)
			after := name
			if strings.HasPrefix(name, "innocent-") || strings.HasPrefix(name, "innocent.") {
				after = "innocent"
			}
			got[rn] = placement{Namespace: md["namespace"].(string), NamedAfter: after}
			want[rn] = placement{Namespace: "team-a", NamedAfter: "innocent"}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("namespace and name of every composed object (-want +got):\n%s", diff)
		}
		route := desiredObject[gatewayv1.HTTPRoute](t, rsp, render.ResourceRoute)
		st := statusOf(rsp)
		type identity struct{ Hostnames, URL, RouteURL string }
		wantID := identity{Hostnames: "innocent.team-a.models.example.com", URL: "http://innocent.team-a.svc.cluster.local:80", RouteURL: "http://innocent.team-a.models.example.com"}
		var hosts []string
		for _, h := range route.Spec.Hostnames {
			hosts = append(hosts, string(h))
		}
		gotID := identity{Hostnames: strings.Join(hosts, ","), URL: fmt.Sprint(st["url"]), RouteURL: fmt.Sprint(st["routeURL"])}
		if diff := cmp.Diff(wantID, gotID); diff != "" {
			t.Errorf("route hostname and status URLs (-want +got):\n%s", diff)
		}
		if _, ok := warningWith(rsp, "metadata.labels: "); !ok {
			t.Errorf("no warning that the claim labels are ignored; warnings: %v", warningsOf(rsp))
		}
	})
	t.Run("ModelCache lookup", func(t *testing.T) {
		xr := spoofedNamespaced(readYAML(t, onCacheXRPath))
		rsp := run(t, newRequest(t, xr, nil))
		want := &fnv1.ResourceSelector{ApiVersion: "inference.inferno.io/v1alpha1", Kind: "ModelCache", Match: &fnv1.ResourceSelector_MatchName{MatchName: "llama-3-1-8b"}, Namespace: proto.String("team-a")}
		if got := rsp.GetRequirements().GetResources()[observe.RequirementCache]; !proto.Equal(got, want) {
			t.Errorf("ModelCache requirement %v, want %v", got, want)
		}
		missing := run(t, withRequired(t, newRequest(t, xr, nil)))
		if msg := conditionMessage(missing, reason.ConditionWeightsReady); !strings.Contains(msg, "in namespace team-a") {
			t.Errorf("WeightsReady message %q does not look in team-a", msg)
		}
	})
	t.Run("cluster-scoped composite keeps the claim labels", func(t *testing.T) {
		s := mustResolve(t, testXR(), nil)
		if s.Name != "llama" || s.Namespace != "team-a" {
			t.Errorf("a claim's composite renders as %s/%s, want team-a/llama", s.Namespace, s.Name)
		}
	})
}

// poolInput is an Input naming a Gateway with the inference extension on,
// with ext laid over inferenceExtension and picker over its picker.
func poolInput(ext, picker map[string]any) map[string]any {
	x := map[string]any{"enabled": true}
	for k, v := range ext {
		x[k] = v
	}
	if picker != nil {
		x["picker"] = picker
	}
	return map[string]any{"traffic": map[string]any{"gateway": map[string]any{"name": "inference", "namespace": "gateways", "domain": "models.example.com", "inferenceExtension": x}}}
}

// TestBadInputCacheOutsidePolicy is the catalogue of ModelCaches that a
// service's own policy refuses, whatever Composition composed them: each
// is the Ready cache of examples/modelcache/required/ready.yaml with one
// edit, given to the example service on it under an Input whose policy
// refuses the edit. The service gets one Fatal at spec.model.cacheRef that
// names the cache, the cache's field, the input.policy setting and the
// fix, and no composed resource, even once its servers run.
func TestBadInputCacheOutsidePolicy(t *testing.T) {
	policy := func(p map[string]any) map[string]any { return map[string]any{"policy": p} }
	edit := func(value any, path ...string) func(map[string]any) {
		return func(c map[string]any) { setPath(c, value, path...) }
	}
	cases := map[string]struct {
		cache   func(map[string]any)
		service func(map[string]any)
		input   map[string]any
		field   string // the field of the refusal
		fix     string // the platform's setting it names
	}{
		"Scheme":              {cache: edit("s3://models/llama", "spec", "uri"), input: policy(map[string]any{"allowedURISchemes": []any{"hf"}}), field: "spec.model.cacheRef", fix: "its spec.uri: s3:// is not among the schemes the platform allows (input.policy.allowedURISchemes: hf)"},
		"Host":                {cache: edit("hf://evil/llama", "spec", "uri"), input: policy(map[string]any{"allowedURIHosts": []any{"hf://meta-llama"}}), field: "spec.model.cacheRef", fix: "its spec.uri: hf://evil is not among the sources the platform allows (input.policy.allowedURIHosts: hf://meta-llama)"},
		"StorageSize":         {cache: edit("2Ti", "spec", "storage", "size"), input: policy(map[string]any{"maxStorageSize": "500Gi"}), field: "spec.model.cacheRef", fix: "its spec.storage.size: 2Ti is over the limit of 500Gi per volume that the platform set (input.policy.maxStorageSize)"},
		"StorageClass":        {cache: edit("local-path", "spec", "storage", "storageClassName"), input: policy(map[string]any{"allowedStorageClasses": []any{"fast-rwx"}}), field: "spec.model.cacheRef", fix: `its spec.storage.storageClassName: "local-path" is not among the StorageClasses the platform allows (input.policy.allowedStorageClasses: fast-rwx)`},
		"StorageClassDefault": {input: map[string]any{"policy": map[string]any{"allowedStorageClasses": []any{"fast-rwx"}}}, field: "spec.model.cacheRef", fix: "its spec.storage.storageClassName: is not set and the platform's Input sets no default"},
		"CredentialsInClearText": {cache: func(c map[string]any) {
			setPath(c, "http://mirror.internal/llama.gguf", "spec", "uri")
		}, input: policy(map[string]any{"allowedURISchemes": []any{"http"}}), field: "spec.model.cacheRef", fix: "its spec.credentialsSecretRef: would send Secret hf-credentials to mirror.internal in clear text, since http://mirror.internal/llama.gguf is plain http://; use https://, or ask your platform team to list \"mirror.internal\" in input.policy.plainHTTPCredentialHosts"},
		// The uri a service on a cache states is a source like any other,
		// judged before the cache is looked at.
		"StatedURI": {service: func(x map[string]any) { setPath(x, "hf://evil/llama", "spec", "model", "uri") }, input: policy(map[string]any{"allowedURIHosts": []any{"hf://meta-llama"}}), field: "spec.model.uri", fix: "hf://evil is not among the sources the platform allows (input.policy.allowedURIHosts"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cache := readYAML(t, "../examples/modelcache/required/ready.yaml")
			if tc.cache != nil {
				tc.cache(cache)
			}
			svc := readYAML(t, onCacheXRPath)
			if tc.service != nil {
				tc.service(svc)
			}
			// Fresh, and once the servers run on the cache (the cache's
			// spec changed under them, or the policy tightened).
			_, serving := settle(t, readYAML(t, onCacheXRPath), nil, world{}, nil, readYAML(t, "../examples/modelcache/required/ready.yaml"))
			for _, observed := range [][]observedObject{nil, serving} {
				rsp := run(t, withRequired(t, newRequest(t, svc, tc.input, observed...), cache))
				var fatals []string
				for _, r := range rsp.GetResults() {
					if r.GetSeverity() == fnv1.Severity_SEVERITY_FATAL {
						fatals = append(fatals, r.GetMessage())
					}
				}
				if len(fatals) != 1 {
					t.Fatalf("want one Fatal result, got %d: %v", len(fatals), rsp.GetResults())
				}
				msg := fatals[0]
				if !strings.HasPrefix(msg, tc.field+": ") || !strings.Contains(msg, tc.fix) || !strings.Contains(msg, "platform") {
					t.Errorf("Fatal %q does not name %s with %q", msg, tc.field, tc.fix)
				}
				if tc.field == "spec.model.cacheRef" && (!strings.Contains(msg, "ModelCache llama-3-1-8b (uri ") || !strings.Contains(msg, "serve a ModelCache that the platform allows")) {
					t.Errorf("Fatal %q does not name the cache, what it pulls, and the fix", msg)
				}
				if names := desiredNames(rsp); len(names) != 0 {
					t.Errorf("desired %v for a service on a refused cache (with %d observed)", names, len(observed))
				}
			}
		})
	}
}
