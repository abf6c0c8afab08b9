package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderLockedDown renders examples/locked-down through the
// real crossplane CLI: a claim within every guardrail of its Composition's
// Input gets NetworkPolicies from its first render and, serving, servers
// under the platform's ServiceAccount without an API token; a claim beyond
// them is refused with one Fatal that names every field and its
// input.policy setting, and the CLI renders nothing. The policy denies
// every free argument, and the claim's typed server options reach the
// servers all the same.
func TestCrossplaneRenderLockedDown(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	dir := filepath.Join(root, "examples", "locked-down")
	args := func(xr, observed string) Args {
		a := Args{CLI: cli, XR: filepath.Join(dir, xr), Composition: filepath.Join(dir, "composition.yaml"), Functions: filepath.Join(root, "examples", "functions.yaml")}
		if observed != "" {
			a.Observed = filepath.Join(dir, "observed", observed)
		}
		return a
	}

	cases := []struct {
		stage, observed string
		resources       []string
		phase           string
	}{
		{stage: "fresh", resources: []string{"network-policy", "network-policy-pull", "pull-job-*", "pull-job-*", "weights-pvc"}, phase: "Pulling"},
		{stage: "serving", observed: "serving.yaml", resources: []string{
			"deployment", "deployment-2", "hpa", "hpa-2", "network-policy", "network-policy-pull", "pull-job-*", "pull-job-*",
			"route", "service", "service-1", "service-2", "weights-pvc",
		}, phase: "Serving"},
	}
	for _, tc := range cases {
		t.Run(tc.stage, func(t *testing.T) {
			xr, names, composed := sortOutput(renderDocs(t, f, args("xr.yaml", tc.observed)), "XInferenceService")
			if diff := cmp.Diff(tc.resources, names); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			status, _ := xr["status"].(map[string]any)
			if status["phase"] != tc.phase {
				t.Errorf("status.phase %v, want %s (%v)", status["phase"], tc.phase, status["message"])
			}
			type pod struct{ ServiceAccount, Token string }
			for _, d := range composed {
				meta, _ := d["metadata"].(map[string]any)
				spec, _ := d["spec"].(map[string]any)
				switch d["kind"] {
				case "NetworkPolicy":
					if meta["name"] != "chat" && meta["name"] != "chat.pull" {
						t.Errorf("NetworkPolicy %v, want chat or chat.pull", meta["name"])
					}
				case "Deployment", "Job":
					tmpl, _ := spec["template"].(map[string]any)
					ps, _ := tmpl["spec"].(map[string]any)
					want := pod{Token: "false"}
					if d["kind"] == "Deployment" {
						want.ServiceAccount = "model-servers"
					}
					got := pod{ServiceAccount: str(ps["serviceAccountName"]), Token: str(ps["automountServiceAccountToken"])}
					if diff := cmp.Diff(want, got); diff != "" {
						t.Errorf("%s %v pod service account and token (-want +got):\n%s", d["kind"], meta["name"], diff)
					}
					// The claim's typed options, under a policy that denies
					// every free argument, end the servers' arguments.
					if d["kind"] == "Deployment" {
						cs, _ := ps["containers"].([]any)
						c, _ := cs[0].(map[string]any)
						args, _ := c["args"].([]any)
						want := []any{"--max-model-len", "16384", "--max-num-seqs", "64"}
						if len(args) < len(want) || !cmp.Equal(want, args[len(args)-len(want):]) {
							t.Errorf("Deployment %v server args %v, want them to end with %v", meta["name"], args, want)
						}
					}
				}
			}
		})
	}

	// The ModelCache Composition takes the same Input: a cache within the
	// policy is composed; one beyond it, and a service on a cache composed
	// elsewhere that the policy refuses, are refused by name.
	t.Run("modelcache", func(t *testing.T) {
		a := Args{CLI: cli, XR: filepath.Join(dir, "modelcache-xr.yaml"), Composition: filepath.Join(dir, "modelcache-composition.yaml"), Functions: filepath.Join(root, "examples", "functions.yaml")}
		_, names, _ := sortOutput(renderDocs(t, f, a), "XModelCache")
		if diff := cmp.Diff([]string{"network-policy-pull", "pull-job-*", "weights-pvc"}, names); diff != "" {
			t.Errorf("composed resources (-want +got):\n%s", diff)
		}
	})
	refusals := map[string]struct {
		args   Args
		fields []string
	}{
		"modelcache-refused": {
			args:   Args{CLI: cli, XR: filepath.Join(dir, "modelcache-refused.yaml"), Composition: filepath.Join(dir, "modelcache-composition.yaml"), Functions: filepath.Join(root, "examples", "functions.yaml")},
			fields: []string{"spec.uri:", "input.policy.allowedURIHosts", "spec.storage.size:", "spec.storage.storageClassName:"},
		},
		"service-on-refused-cache": {
			args:   Args{CLI: cli, XR: filepath.Join(root, "examples", "modelcache", "service-xr.yaml"), Composition: filepath.Join(dir, "composition.yaml"), Functions: filepath.Join(root, "examples", "functions.yaml"), Required: filepath.Join(dir, "required", "cache-elsewhere.yaml")},
			fields: []string{"spec.model.cacheRef: ModelCache llama-3-1-8b", "input.policy.allowedURIHosts", "input.policy.maxStorageSize", "input.policy.allowedStorageClasses"},
		},
	}
	for name, tc := range refusals {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			out, err := f.Render(ctx, tc.args)
			if err == nil {
				t.Fatalf("crossplane render accepted it:\n%s", out)
			}
			for _, field := range tc.fields {
				if !strings.Contains(err.Error(), field) {
					t.Errorf("the fatal result does not name %s:\n%v", field, err)
				}
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := f.Render(ctx, args("refused.yaml", ""))
		if err == nil {
			t.Fatalf("crossplane render accepted the refused claim:\n%s", out)
		}
		for _, field := range []string{"spec.serve.image:", "spec.serve.env[0].valueFrom:", "spec.traffic[1].credentialsSecretRef:", "spec.traffic[1].uri:", "spec.resources.gpu:", "spec.storage.storageClassName:", "input.policy.maxGPUsPerClaim"} {
			if !strings.Contains(err.Error(), field) {
				t.Errorf("the fatal result does not name %s:\n%v", field, err)
			}
		}
	})
}

func str(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		if v {
			return "true"
		}
		return "false"
	}
	return "?"
}
