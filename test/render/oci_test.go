package render

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestCrossplaneRenderOCI renders examples/oci through the real crossplane
// CLI: with its Composition (input.oci.mode: ImageVolume) the claim gets a
// Deployment and a Service, no pull Job and no volume, and the servers'
// pods mount the image read-only with the claim's image pull Secret;
// fresh and starting it is Starting, serving Serving. Under the default
// Composition the same claim is refused, naming input.oci.mode.
func TestCrossplaneRenderOCI(t *testing.T) {
	cli := crossplaneCLI(t)
	f, err := StartFunction(buildFunction(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Stop)
	dir := filepath.Join(root, "examples", "oci")
	args := func(composition, observed string) Args {
		a := Args{CLI: cli, XR: filepath.Join(dir, "xr.yaml"), Composition: composition, Functions: filepath.Join(root, "examples", "functions.yaml")}
		if observed != "" {
			a.Observed = filepath.Join(dir, "observed", observed)
		}
		return a
	}
	comp := filepath.Join(dir, "composition.yaml")
	for _, tc := range []struct{ stage, observed, phase, weights string }{
		{stage: "fresh", phase: "Starting", weights: "ImageVolumePending"},
		{stage: "starting", observed: "starting.yaml", phase: "Starting", weights: "ImageVolumePulling"},
		{stage: "serving", observed: "serving.yaml", phase: "Serving", weights: "ImageVolumeMounted"},
	} {
		t.Run(tc.stage, func(t *testing.T) {
			xr, names, composed := sortOutput(renderDocs(t, f, args(comp, tc.observed)), "XInferenceService")
			if diff := cmp.Diff([]string{"deployment", "service"}, names); diff != "" {
				t.Errorf("composed resources (-want +got):\n%s", diff)
			}
			status, _ := xr["status"].(map[string]any)
			if status["phase"] != tc.phase {
				t.Errorf("status.phase %v, want %s (%v)", status["phase"], tc.phase, status["message"])
			}
			if got := conditionReason(status, "WeightsReady"); got != tc.weights {
				t.Errorf("WeightsReady %s, want %s", got, tc.weights)
			}
			for _, d := range composed {
				if d["kind"] != "Deployment" {
					continue
				}
				spec, _ := d["spec"].(map[string]any)
				tmpl, _ := spec["template"].(map[string]any)
				pod, _ := tmpl["spec"].(map[string]any)
				vols, _ := pod["volumes"].([]any)
				w, _ := vols[0].(map[string]any)
				img, _ := w["image"].(map[string]any)
				if !strings.HasPrefix(str(img["reference"]), "registry.example.com/models/llama-3.1-8b@sha256:") || img["pullPolicy"] != "Always" {
					t.Errorf("weights volume %v, want the image pinned by digest, Always (a private image: it has a pull Secret)", w)
				}
				secrets, _ := pod["imagePullSecrets"].([]any)
				if len(secrets) != 1 || secrets[0].(map[string]any)["name"] != "regcred" {
					t.Errorf("imagePullSecrets %v, want regcred", secrets)
				}
			}
		})
	}
	t.Run("refused", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := f.Render(ctx, args(filepath.Join(root, "apis", "composition.yaml"), ""))
		if err == nil {
			t.Fatalf("crossplane render accepted oci:// under the default Composition:\n%s", out)
		}
		for _, want := range []string{"spec.model.uri: oci:// weights are mounted as Kubernetes image volumes", "input.oci.mode: Refuse", "input.oci.mode: ImageVolume"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("the fatal result does not say %q:\n%v", want, err)
			}
		}
	})
}

// conditionReason is the reason of the status condition of type typ.
func conditionReason(status map[string]any, typ string) string {
	list, _ := status["conditions"].([]any)
	for _, c := range list {
		m, _ := c.(map[string]any)
		if m["type"] == typ {
			return str(m["reason"])
		}
	}
	return ""
}
