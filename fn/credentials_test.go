package fn

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	batchv1 "k8s.io/api/batch/v1"
)

// secretValue is the value every test Secret holds under every key: no
// response may contain it.
const secretValue = "czNjcjN0LXZhbHVl" // base64 of s3cr3t-value

// testSecret is a Secret of team-a with keys (each holding secretValue)
// and labels.
func testSecret(name string, labels map[string]any, keys ...string) map[string]any {
	data := map[string]any{}
	for _, k := range keys {
		data[k] = secretValue
	}
	md := map[string]any{"name": name, "namespace": "team-a"}
	if labels != nil {
		md["labels"] = labels
	}
	return map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": md, "data": data}
}

// withSecrets puts Secrets into a request as Crossplane does once it
// resolved the function's requirements: name → the Secret, or nil for
// fetched and not found.
func withSecrets(t testing.TB, req *fnv1.RunFunctionRequest, secrets map[string]map[string]any) *fnv1.RunFunctionRequest {
	t.Helper()
	if req.RequiredResources == nil {
		req.RequiredResources = map[string]*fnv1.Resources{}
	}
	for name, obj := range secrets {
		items := &fnv1.Resources{}
		if obj != nil {
			items.Items = []*fnv1.Resource{{Resource: mustStruct(t, obj)}}
		}
		req.RequiredResources[observe.RequirementSecretPrefix+name] = items
	}
	return req
}

// hasPullJob says the response returns a pull Job.
func hasPullJob(rsp *fnv1.RunFunctionResponse) bool {
	return slices.ContainsFunc(desiredNames(rsp), func(n string) bool { return strings.HasPrefix(n, render.ResourceJobPrefix) })
}

// TestCredentialsRequired: every Secret a claim names as credentials (the
// model's, a canary's, an adapter's, a ModelCache's, an image pull
// Secret) is asked of Crossplane by name in the claim's namespace,
// through both requirement fields, on every call.
func TestCredentialsRequired(t *testing.T) {
	secretsOf := func(rsp *fnv1.RunFunctionResponse) []string {
		var out []string
		for k, sel := range rsp.GetRequirements().GetResources() {
			name, ok := strings.CutPrefix(k, observe.RequirementSecretPrefix)
			if !ok {
				continue
			}
			want := &fnv1.ResourceSelector{ApiVersion: "v1", Kind: "Secret", Match: &fnv1.ResourceSelector_MatchName{MatchName: name}, Namespace: proto.String("team-a")}
			if !proto.Equal(sel, want) {
				t.Errorf("requirement %s = %v, want %v", k, sel, want)
			}
			if !proto.Equal(rsp.GetRequirements().GetExtraResources()[k], want) { //nolint:staticcheck // Crossplane v1's field.
				t.Errorf("deprecated requirement %s missing", k)
			}
			out = append(out, name)
		}
		slices.Sort(out)
		return out
	}
	for name, tc := range map[string]struct {
		xr   map[string]any
		in   map[string]any
		want []string
	}{
		"None":       {xr: testXR()},
		"Model":      {xr: readYAML(t, "../examples/xr.yaml"), want: []string{"hf-credentials"}},
		"Adapters":   {xr: loraXR(t), want: []string{"acme-hf", "hf-credentials"}},
		"ModelCache": {xr: readYAML(t, cacheXRPath), want: []string{"hf-credentials"}},
		"OnCache":    {xr: readYAML(t, onCacheXRPath)},
		"OCI":        {xr: ociXR(testOCI), in: ociInput(), want: []string{"regcred"}},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, tc.xr, tc.in))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatalf("fatal: %s", msg)
			}
			if diff := cmp.Diff(tc.want, secretsOf(rsp)); diff != "" {
				t.Errorf("required Secrets (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCredentialsMissing: a pull does not start until its Secret is there
// with every key its puller reads; until then WeightsReady says
// CredentialsMissing (phase Pending), not an endless pull. A Job created
// before keeps being returned (Crossplane would delete it), and weights
// already pulled do not need the Secret any more.
func TestCredentialsMissing(t *testing.T) {
	xr := readYAML(t, "../examples/xr.yaml") // hf-credentials, key HF_TOKEN
	fresh := run(t, newRequest(t, xr, nil))
	job := pullJobResource(t, fresh)
	running := observedFrom(t, fresh, job, jobRunningStatus())
	complete := observedFrom(t, fresh, job, jobCompleteStatus())
	pvc := observedFrom(t, fresh, render.ResourcePVC, pvcPhase("Bound"))
	type verdict struct {
		Job    bool
		Reason string
		Phase  any
	}
	for name, tc := range map[string]struct {
		secret   map[string]any
		observed []observedObject
		want     verdict
		says     string
	}{
		"Absent":           {want: verdict{Reason: "CredentialsMissing", Phase: "Pending"}, says: "Secret hf-credentials (spec.model.credentialsSecretRef) does not exist in namespace team-a"},
		"WithoutKey":       {secret: testSecret("hf-credentials", nil, "token"), want: verdict{Reason: "CredentialsMissing", Phase: "Pending"}, says: "has keys token, not key HF_TOKEN"},
		"Present":          {secret: testSecret("hf-credentials", nil, "HF_TOKEN", "HTTPS_PROXY"), want: verdict{Job: true, Reason: "Pulling", Phase: "Pulling"}},
		"JobRunningAbsent": {observed: []observedObject{pvc, running}, want: verdict{Job: true, Reason: "CredentialsMissing", Phase: "Pending"}, says: "waits for it"},
		"PulledAbsent":     {observed: []observedObject{pvc, complete}, want: verdict{Job: true, Reason: "Pulled", Phase: "Starting"}},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, withSecrets(t, newRequest(t, xr, nil, tc.observed...), map[string]map[string]any{"hf-credentials": tc.secret}))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatalf("fatal: %s", msg)
			}
			got := verdict{Job: hasPullJob(rsp), Reason: conditionReason(rsp, reason.ConditionWeightsReady), Phase: statusOf(rsp)["phase"]}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if msg := conditionMessage(rsp, reason.ConditionWeightsReady); !strings.Contains(msg, tc.says) {
				t.Errorf("WeightsReady %q does not say %q", msg, tc.says)
			}
		})
	}
}

// TestCredentialsMissingEverySource: the same holds for a canary's pull,
// an adapter's, a ModelCache's and an oci:// model's image pull Secret
// (whose servers wait, as a pull would).
func TestCredentialsMissingEverySource(t *testing.T) {
	t.Run("adapter", func(t *testing.T) {
		xr := loraXR(t)
		rsp := run(t, withSecrets(t, newRequest(t, xr, nil), map[string]map[string]any{
			"hf-credentials": testSecret("hf-credentials", nil, "HF_TOKEN"), "acme-hf": nil,
		}))
		jobs := 0
		for _, n := range desiredNames(rsp) {
			if strings.HasPrefix(n, render.ResourceJobPrefix) {
				jobs++
			}
		}
		if jobs != 2 {
			t.Errorf("%d pull Jobs, want 2 (the model's and the adapter's with its Secret; not the one of acme-hf): %v", jobs, desiredNames(rsp))
		}
		b, _ := json.Marshal(statusOf(rsp)["adapters"])
		if !strings.Contains(string(b), "Secret acme-hf") {
			t.Errorf("status.adapters does not name the missing Secret: %s", b)
		}
	})
	t.Run("ModelCache", func(t *testing.T) {
		rsp := run(t, withSecrets(t, newRequest(t, readYAML(t, cacheXRPath), nil), map[string]map[string]any{"hf-credentials": nil}))
		if hasPullJob(rsp) {
			t.Errorf("a pull Job without its Secret: %v", desiredNames(rsp))
		}
		if got := conditionReason(rsp, reason.ConditionWeightsReady); got != "CredentialsMissing" {
			t.Errorf("WeightsReady %s, want CredentialsMissing", got)
		}
	})
	t.Run("OCI", func(t *testing.T) {
		missing := run(t, withSecrets(t, newRequest(t, ociXR(testOCI), ociInput()), map[string]map[string]any{"regcred": testSecret("regcred", nil, "token")}))
		if slices.Contains(desiredNames(missing), render.ResourceDeployment) {
			t.Errorf("servers without their image pull Secret's .dockerconfigjson: %v", desiredNames(missing))
		}
		if got := conditionReason(missing, reason.ConditionWeightsReady); got != "CredentialsMissing" {
			t.Errorf("WeightsReady %s, want CredentialsMissing", got)
		}
		present := run(t, withSecrets(t, newRequest(t, ociXR(testOCI), ociInput()), map[string]map[string]any{"regcred": testSecret("regcred", nil, ".dockerconfigjson")}))
		if !slices.Contains(desiredNames(present), render.ResourceDeployment) {
			t.Errorf("no servers with the image pull Secret there: %v", desiredNames(present))
		}
	})
}

// TestCredentialSecretSelector: with input.policy.credentialSecretSelector
// a claim may name only Secrets that carry its labels. One outside it is
// refused by name (the field, the platform's setting, the fix); until
// Crossplane has fetched the Secret nothing is pulled with it.
func TestCredentialSecretSelector(t *testing.T) {
	in := map[string]any{"policy": map[string]any{"credentialSecretSelector": map[string]any{"matchLabels": map[string]any{"inference.inferno.io/credentials": "true"}}}}
	labelled := map[string]any{"inference.inferno.io/credentials": "true"}
	for name, tc := range map[string]struct {
		xr      map[string]any
		secrets map[string]map[string]any
		job     bool
		fatal   string // the field the refusal names, "" for none
		reason  string
	}{
		"Unresolved":     {xr: readYAML(t, "../examples/xr.yaml"), reason: "PullPending"},
		"Labelled":       {xr: readYAML(t, "../examples/xr.yaml"), secrets: map[string]map[string]any{"hf-credentials": testSecret("hf-credentials", labelled, "HF_TOKEN")}, job: true, reason: "Pulling"},
		"Unlabelled":     {xr: readYAML(t, "../examples/xr.yaml"), secrets: map[string]map[string]any{"hf-credentials": testSecret("hf-credentials", map[string]any{"app": "db"}, "HF_TOKEN")}, fatal: "spec.model.credentialsSecretRef.name"},
		"AdapterOutside": {xr: loraXR(t), secrets: map[string]map[string]any{"hf-credentials": testSecret("hf-credentials", labelled, "HF_TOKEN"), "acme-hf": testSecret("acme-hf", nil, "HF_TOKEN")}, fatal: "spec.adapters[1].credentialsSecretRef.name"},
		"ModelCache":     {xr: readYAML(t, cacheXRPath), secrets: map[string]map[string]any{"hf-credentials": testSecret("hf-credentials", nil, "HF_TOKEN")}, fatal: "spec.credentialsSecretRef.name"},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, withSecrets(t, newRequest(t, tc.xr, in), tc.secrets))
			msg := fatalMessage(rsp)
			if tc.fatal != "" {
				if !strings.Contains(msg, tc.fatal+": ") || !strings.Contains(msg, "input.policy.credentialSecretSelector") || !strings.Contains(msg, "ask your platform team to label this one") {
					t.Errorf("fatal %q does not name %s, the platform's setting and the fix", msg, tc.fatal)
				}
				if len(desiredNames(rsp)) != 0 {
					t.Errorf("a refused claim desires %v", desiredNames(rsp))
				}
				return
			}
			if msg != "" {
				t.Fatalf("fatal: %s", msg)
			}
			if got := hasPullJob(rsp); got != tc.job {
				t.Errorf("pull Job returned: %v, want %v", got, tc.job)
			}
			if got := conditionReason(rsp, reason.ConditionWeightsReady); got != tc.reason {
				t.Errorf("WeightsReady %s, want %s", got, tc.reason)
			}
		})
	}
}

// TestCredentialsOnlyThePullersVariables: whatever keys a tenant puts in
// its Secret (an endpoint, a proxy, a CA bundle), the pull Job of every
// scheme reads from it only that scheme's credential variables, by
// secretKeyRef, never envFrom; the values Crossplane hands the function
// appear nowhere in its response.
func TestCredentialsOnlyThePullersVariables(t *testing.T) {
	hostile := []string{"HF_TOKEN", "HF_ENDPOINT", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL", "AWS_CA_BUNDLE",
		"GOOGLE_CREDENTIALS_JSON", "CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE", "BEARER_TOKEN", "HTTPS_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "NO_PROXY", "CURL_CA_BUNDLE", "SSL_CERT_FILE"}
	for uri, want := range map[string][]string{
		"hf://org/m":       {"HF_TOKEN"},
		"s3://bucket/m":    {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"},
		"gs://bucket/m":    {"GOOGLE_CREDENTIALS_JSON"},
		"http://h/m.gguf":  {"BEARER_TOKEN"},
		"https://h/m.gguf": {"BEARER_TOKEN"},
	} {
		t.Run(uri, func(t *testing.T) {
			xr := testXR()
			setPath(xr, uri, "spec", "model", "uri")
			setPath(xr, map[string]any{"name": "tenant"}, "spec", "model", "credentialsSecretRef")
			in := map[string]any{"policy": map[string]any{"plainHTTPCredentialHosts": []any{"h"}}}
			rsp := run(t, withSecrets(t, newRequest(t, xr, in), map[string]map[string]any{"tenant": testSecret("tenant", nil, hostile...)}))
			job := desiredObject[batchv1.Job](t, rsp, pullJobResource(t, rsp))
			var got []string
			for _, c := range append(job.Spec.Template.Spec.InitContainers, job.Spec.Template.Spec.Containers...) {
				if len(c.EnvFrom) > 0 {
					t.Errorf("container %s mounts envFrom %v", c.Name, c.EnvFrom)
				}
				for _, e := range c.Env {
					if r := e.ValueFrom; r != nil && r.SecretKeyRef != nil {
						got = append(got, e.Name)
						if e.Name != r.SecretKeyRef.Key {
							t.Errorf("%s reads key %s", e.Name, r.SecretKeyRef.Key)
						}
					}
				}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("variables read from the Secret (-want +got):\n%s", diff)
			}
			b, err := protojson.Marshal(rsp)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(b), secretValue) {
				t.Errorf("the response carries a value of the Secret")
			}
		})
	}
}
