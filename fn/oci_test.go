package fn

import (
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

const (
	testDigest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	testOCI    = "oci://registry.example.com/models/llama@" + testDigest
)

// ociInput turns image volumes on.
func ociInput() map[string]any { return map[string]any{"oci": map[string]any{"mode": "ImageVolume"}} }

// ociXR is testXR on oci:// weights, with an image pull Secret.
func ociXR(uri string) map[string]any {
	xr := testXR()
	setPath(xr, uri, "spec", "model", "uri")
	setPath(xr, map[string]any{"name": "regcred"}, "spec", "model", "credentialsSecretRef")
	return xr
}

func TestParseOCI(t *testing.T) {
	cases := map[string]resolve.OCIReference{
		"registry.example.com/models/llama:1":                     {Registry: "registry.example.com", Repository: "models/llama", Tag: "1"},
		"registry.example.com/llama@" + testDigest:                {Registry: "registry.example.com", Repository: "llama", Digest: testDigest},
		"registry.example.com:5000/a/b/c:v1.2_x-y":                {Registry: "registry.example.com:5000", Repository: "a/b/c", Tag: "v1.2_x-y"},
		"localhost/llama:1":                                       {Registry: "localhost", Repository: "llama", Tag: "1"},
		"127.0.0.1:5000/llama:1":                                  {Registry: "127.0.0.1:5000", Repository: "llama", Tag: "1"},
		"docker.io/library/model:latest":                          {Registry: "docker.io", Repository: "library/model", Tag: "latest"},
		"ghcr.io/org/my__model.x-y--z:1@" + testDigest:            {Registry: "ghcr.io", Repository: "org/my__model.x-y--z", Tag: "1", Digest: testDigest},
		"Registry.Example.com/llama:1":                            {Registry: "Registry.Example.com", Repository: "llama", Tag: "1"},
		"registry.example.com/" + strings.Repeat("a", 200) + ":1": {Registry: "registry.example.com", Repository: strings.Repeat("a", 200), Tag: "1"},
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			var errs resolve.FieldErrors
			got, ok := resolve.ParseOCI(in, "spec.model.uri", &errs)
			if !ok || len(errs) > 0 {
				t.Fatalf("refused: %v", errs)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.String() != in {
				t.Errorf("String() = %q, want %q", got.String(), in)
			}
		})
	}
	bad := []string{
		"", "registry.example.com", "registry.example.com/", "registry.example.com/llama",
		"llama:1", "models/llama:1", "registry.example.com/llama:", "registry.example.com/llama:.x",
		"registry.example.com/llama@sha256:", "registry.example.com/llama@md5:abc",
		"registry.example.com/-llama:1", "registry.example.com/llama-:1", "registry.example.com/ll..ama:1",
		"registry.example.com:0/llama:1", "registry.example.com:05000/llama:1", "registry.example.com:x/llama:1",
		"reg_istry.example.com/llama:1", "[::1]/llama:1", "registry.example.com/lla ma:1",
	}
	for _, in := range bad {
		t.Run("bad/"+in, func(t *testing.T) {
			var errs resolve.FieldErrors
			if _, ok := resolve.ParseOCI(in, "spec.model.uri", &errs); ok || len(errs) != 1 || !strings.HasPrefix(errs[0], "spec.model.uri: ") {
				t.Errorf("parseOCI(%q) = ok %v, errors %v; want one error naming spec.model.uri", in, ok, errs)
			}
		})
	}
}

// TestOCIFresh: oci:// weights compose no volume and no pull Job; the
// servers are created at once, each pod mounting the image read-only at
// /model with the claim's image pull Secret, and the weights wait for the
// first server.
func TestOCIFresh(t *testing.T) {
	rsp := run(t, newRequest(t, ociXR(testOCI), ociInput()))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	if diff := cmp.Diff([]string{render.ResourceDeployment, render.ResourceService}, desiredNames(rsp)); diff != "" {
		t.Errorf("desired (-want +got):\n%s", diff)
	}
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	pod := d.Spec.Template.Spec
	wantVolume := corev1.Volume{Name: render.VolumeWeights, VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{
		// Always: a private image is checked with the registry for each
		// pod (TestOCIPrivateImagePullsAlways).
		Reference: "registry.example.com/models/llama@" + testDigest, PullPolicy: corev1.PullAlways,
	}}}
	if diff := cmp.Diff(wantVolume, pod.Volumes[0]); diff != "" {
		t.Errorf("weights volume (-want +got):\n%s", diff)
	}
	wantMount := corev1.VolumeMount{Name: render.VolumeWeights, MountPath: render.MountModel, ReadOnly: true}
	if diff := cmp.Diff(wantMount, pod.Containers[0].VolumeMounts[0]); diff != "" {
		t.Errorf("weights mount (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]corev1.LocalObjectReference{{Name: "regcred"}}, pod.ImagePullSecrets); diff != "" {
		t.Errorf("imagePullSecrets (-want +got):\n%s", diff)
	}
	// Nothing of the pod reads the Secret: the kubelet does.
	for _, e := range pod.Containers[0].Env {
		if e.ValueFrom != nil {
			t.Errorf("server env %s reads %v", e.Name, e.ValueFrom)
		}
	}
	if got := conditionReason(rsp, reason.ConditionWeightsReady); got != "ImageVolumePending" {
		t.Errorf("WeightsReady %s, want ImageVolumePending", got)
	}
	if st := statusOf(rsp); st["phase"] != "Starting" {
		t.Errorf("phase %v, want Starting: %v", st["phase"], st["message"])
	}
	if w := warningsOf(rsp); len(w) > 0 && strings.Contains(strings.Join(w, "\n"), "tag") {
		t.Errorf("a digest warns: %v", w)
	}
}

// TestOCIPrivateImagePullsAlways: an image with an image pull Secret is
// pulled Always even when pinned by digest, so that a node that cached it
// for one pod does not mount it for another pod (another tenant's) that
// has no credentials for it: the kubelet checks each pod's own Secret with
// the registry. A public image pinned by digest stays IfNotPresent; a
// canary that shares spec.model's Secret is private too.
func TestOCIPrivateImagePullsAlways(t *testing.T) {
	pinned := "oci://registry.example.com/models/llama@" + testDigest
	public := testXR()
	setPath(public, pinned, "spec", "model", "uri")
	canary := ociXR(pinned)
	setPath(canary, "1", "spec", "model", "version")
	setPath(canary, []any{map[string]any{"version": "1", "weight": 90}, map[string]any{"version": "2", "weight": 10, "uri": "oci://registry.example.com/models/llama@sha256:" + strings.Repeat("b", 64)}}, "spec", "traffic")
	policies := func(rsp *fnv1.RunFunctionResponse) map[string]corev1.PullPolicy {
		out := map[string]corev1.PullPolicy{}
		for _, n := range desiredNames(rsp) {
			if !strings.HasPrefix(n, render.ResourceDeployment) {
				continue
			}
			d := desiredObject[appsv1.Deployment](t, rsp, n)
			for _, v := range d.Spec.Template.Spec.Volumes {
				if v.Image != nil {
					out[n] = v.Image.PullPolicy
				}
			}
		}
		return out
	}
	for name, tc := range map[string]struct {
		xr   map[string]any
		want map[string]corev1.PullPolicy
	}{
		"PublicDigest":  {xr: public, want: map[string]corev1.PullPolicy{render.ResourceDeployment: corev1.PullIfNotPresent}},
		"PrivateDigest": {xr: ociXR(pinned), want: map[string]corev1.PullPolicy{render.ResourceDeployment: corev1.PullAlways}},
		"PrivateCanary": {xr: canary, want: map[string]corev1.PullPolicy{render.ResourceDeployment: corev1.PullAlways, render.ResourceDeployment + "-2": corev1.PullAlways}},
	} {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, newRequest(t, tc.xr, ociInput()))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			if diff := cmp.Diff(tc.want, policies(rsp)); diff != "" {
				t.Errorf("image volume pull policies (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOCITag: a tag is pulled Always, and warned about.
func TestOCITag(t *testing.T) {
	rsp := run(t, newRequest(t, ociXR("oci://registry.example.com/models/llama:3.1"), ociInput()))
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	if got := d.Spec.Template.Spec.Volumes[0].Image.PullPolicy; got != corev1.PullAlways {
		t.Errorf("pull policy %s, want Always", got)
	}
	w := strings.Join(warningsOf(rsp), "\n")
	if !strings.Contains(w, `spec.model.uri: tag "3.1" can move`) || !strings.Contains(w, "pin a digest") {
		t.Errorf("warnings %q do not warn of the tag", w)
	}
}

// TestOCIConditions: what the Deployment shows of the image volume.
func TestOCIConditions(t *testing.T) {
	xr, in := ociXR(testOCI), ociInput()
	fresh := run(t, newRequest(t, xr, in))
	progressFailed := map[string]any{"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded", "message": `ReplicaSet "llama-5d4" has timed out progressing.`}
	replicaFailure := map[string]any{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate", "message": `pods "llama-5d4-x" is forbidden: spec.volumes[0].image: Forbidden: may not be set`}
	cases := map[string]struct {
		status map[string]any
		reason string
		phase  string
		says   string
	}{
		"Pulling":  {status: deploymentStatus(1, 0), reason: "ImageVolumePulling", phase: "Starting", says: "kubectl describe pods -n team-a -l app.kubernetes.io/instance=llama"},
		"Mounted":  {status: deploymentStatus(1, 1), reason: "ImageVolumeMounted", phase: "Serving", says: "mount registry.example.com/models/llama@" + testDigest + " read-only"},
		"Refused":  {status: deploymentStatus(1, 0, replicaFailure), reason: "ImageVolumeRefused", phase: "Starting", says: "spec.volumes[0].image: Forbidden"},
		"TimedOut": {status: deploymentStatus(1, 0, progressFailed), reason: "ImageVolumeFailed", phase: "Failed", says: "before the rollout gave up"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			obs := []observedObject{observeDeployment(t, fresh, 1, tc.status), observedFrom(t, fresh, render.ResourceService, map[string]any{})}
			rsp := run(t, newRequest(t, xr, in, obs...))
			if got := conditionReason(rsp, reason.ConditionWeightsReady); got != tc.reason {
				t.Errorf("WeightsReady %s, want %s", got, tc.reason)
			}
			if msg := conditionMessage(rsp, reason.ConditionWeightsReady); !strings.Contains(msg, tc.says) {
				t.Errorf("WeightsReady message %q does not say %q", msg, tc.says)
			}
			if st := statusOf(rsp); st["phase"] != tc.phase {
				t.Errorf("phase %v, want %s: %v", st["phase"], tc.phase, st["message"])
			}
			if diff := cmp.Diff([]string{render.ResourceDeployment, render.ResourceService}, desiredNames(rsp)); diff != "" {
				t.Errorf("desired (-want +got):\n%s", diff)
			}
		})
	}
}

// TestOCIFromPulled: a claim that moves from pulled weights to oci://
// rolls its servers onto the image at once (nothing to wait for) and
// stops composing the volume and the pull Job, which Crossplane deletes
// (the volume once the old servers let go of it: PVC protection).
func TestOCIFromPulled(t *testing.T) {
	xr := testXR()
	obs := serving(t, xr, nil, 1, deploymentStatus(1, 1))
	setPath(xr, testOCI, "spec", "model", "uri")
	rsp := run(t, newRequest(t, xr, ociInput(), obs...))
	if msg := fatalMessage(rsp); msg != "" {
		t.Fatal(msg)
	}
	if diff := cmp.Diff([]string{render.ResourceDeployment, render.ResourceService}, desiredNames(rsp)); diff != "" {
		t.Errorf("desired (-want +got):\n%s", diff)
	}
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	if v := d.Spec.Template.Spec.Volumes[0]; v.Image == nil || v.PersistentVolumeClaim != nil {
		t.Errorf("weights volume %+v, want the image alone", v.VolumeSource)
	}
	if got := conditionReason(rsp, reason.ConditionWeightsReady); got != "ImageVolumePulling" {
		t.Errorf("WeightsReady %s, want ImageVolumePulling (the observed servers are on the old weights)", got)
	}
}

// TestOCIServedWeights: a Deployment's template records oci:// weights
// whole, so a departing version is rendered again as it was.
func TestOCIServedWeights(t *testing.T) {
	w := render.Weights{ID: "abc", Image: "registry.example.com/llama:1", PullPolicy: corev1.PullAlways, PullSecret: "regcred"}
	s := mustResolve(t, ociXR(testOCI), ociInput())
	d := render.Deployment(s, s.Primary(), w, ptr.To(int32(1)))
	got, ok := render.ServedWeights(&d.Spec.Template)
	if !ok {
		t.Fatal("the template does not say what it serves")
	}
	if diff := cmp.Diff(w, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestOCICanary: an oci:// version beside a pulled primary: each version
// has its own source, so the primary's volume and Job stay and the canary
// mounts its image. The primary's credentials never go to the canary's
// registry; a canary on the primary's registry shares them.
func TestOCICanary(t *testing.T) {
	canary := func(primary, uri string, secret bool) map[string]any {
		xr := testXR()
		setPath(xr, primary, "spec", "model", "uri")
		if secret {
			setPath(xr, map[string]any{"name": "primary-creds"}, "spec", "model", "credentialsSecretRef")
		}
		setPath(xr, "1", "spec", "model", "version")
		setPath(xr, []any{map[string]any{"version": "1", "weight": 90}, map[string]any{"version": "2", "weight": 10, "uri": uri}}, "spec", "traffic")
		setPath(xr, map[string]any{"min": 2}, "spec", "replicas")
		return xr
	}
	t.Run("BesidePulled", func(t *testing.T) {
		rsp, _ := settle(t, canary("hf://meta-llama/Llama-3.1-8B-Instruct", testOCI, true), ociInput(), world{}, nil)
		names := desiredNames(rsp)
		for _, want := range []string{render.ResourcePVC, "deployment", "deployment-2"} {
			if !slices.Contains(names, want) {
				t.Errorf("desired %v lacks %s", names, want)
			}
		}
		d := desiredObject[appsv1.Deployment](t, rsp, "deployment-2")
		pod := d.Spec.Template.Spec
		if pod.Volumes[0].Image == nil || pod.Volumes[0].Image.Reference != strings.TrimPrefix(testOCI, "oci://") {
			t.Errorf("canary weights volume %+v", pod.Volumes[0].VolumeSource)
		}
		if len(pod.ImagePullSecrets) > 0 {
			t.Errorf("the canary got the primary's hf:// credentials as %v", pod.ImagePullSecrets)
		}
		primary := desiredObject[appsv1.Deployment](t, rsp, "deployment")
		if primary.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim == nil {
			t.Errorf("primary weights volume %+v, want the cache volume", primary.Spec.Template.Spec.Volumes[0].VolumeSource)
		}
		if st := statusOf(rsp); st["phase"] != "Serving" {
			t.Errorf("phase %v: %v", st["phase"], st["message"])
		}
	})
	t.Run("SameRegistry", func(t *testing.T) {
		rsp, _ := settle(t, canary(testOCI, "oci://registry.example.com/models/llama:2", true), ociInput(), world{}, nil)
		for _, name := range []string{"deployment", "deployment-2"} {
			d := desiredObject[appsv1.Deployment](t, rsp, name)
			if diff := cmp.Diff([]corev1.LocalObjectReference{{Name: "primary-creds"}}, d.Spec.Template.Spec.ImagePullSecrets); diff != "" {
				t.Errorf("%s imagePullSecrets (-want +got):\n%s", name, diff)
			}
		}
		if slices.Contains(desiredNames(rsp), render.ResourcePVC) {
			t.Errorf("desired %v: no version pulls, so no volume", desiredNames(rsp))
		}
	})
	t.Run("OtherRegistry", func(t *testing.T) {
		rsp, _ := settle(t, canary(testOCI, "oci://ghcr.io/someone/llama:2", true), ociInput(), world{}, nil)
		d := desiredObject[appsv1.Deployment](t, rsp, "deployment-2")
		if len(d.Spec.Template.Spec.ImagePullSecrets) > 0 {
			t.Errorf("the primary's Secret went to another registry: %v", d.Spec.Template.Spec.ImagePullSecrets)
		}
		if w := strings.Join(warningsOf(rsp), "\n"); !strings.Contains(w, "spec.traffic[1].credentialsSecretRef: version \"2\" pulls from oci://ghcr.io") {
			t.Errorf("warnings %q do not say the credentials stay with the primary", w)
		}
	})
}

// TestOCIStorageWarns: spec.storage does nothing for oci:// weights.
func TestOCIStorageWarns(t *testing.T) {
	xr := ociXR(testOCI)
	setPath(xr, "100Gi", "spec", "storage", "size")
	rsp := run(t, newRequest(t, xr, ociInput()))
	if w := strings.Join(warningsOf(rsp), "\n"); !strings.Contains(w, "spec.storage has no effect: pvc:// and oci://") {
		t.Errorf("warnings %q", w)
	}
}

// The oci example: a Composition that mounts image volumes, and a claim.
const ociDir = "../examples/oci"

// TestOCIGolden renders examples/oci/xr.yaml with its Composition's Input
// fresh, starting (the image pulling: no server ready) and serving, and
// compares them with fn/testdata/golden/oci-*.yaml. With -update it
// rewrites them and examples/oci/observed. The same claim under the
// default Composition is refused, naming input.oci.mode.
func TestOCIGolden(t *testing.T) {
	comp := readYAML(t, filepath.Join(ociDir, "composition.yaml"))
	steps, _ := nested(comp, "spec", "pipeline")
	in, _ := steps.([]any)[0].(map[string]any)["input"].(map[string]any)
	xr := readYAML(t, filepath.Join(ociDir, "xr.yaml"))

	fresh := run(t, newRequest(t, xr, in))
	if msg := fatalMessage(fresh); msg != "" {
		t.Fatalf("the oci example is refused: %s", msg)
	}
	compareGolden(t, "oci-fresh", fresh)
	for stage, ready := range map[string]int{"starting": 0, "serving": 2} {
		t.Run(stage, func(t *testing.T) {
			fixture := filepath.Join(ociDir, "observed", stage+".yaml")
			if *update {
				obs := []observedObject{observeDeployment(t, fresh, 2, deploymentStatus(2, ready)), observedFrom(t, fresh, render.ResourceService, map[string]any{})}
				writeObserved(t, fixture, "examples/oci/xr.yaml", stage, obs)
			}
			rsp := run(t, newRequest(t, xr, in, readObserved(t, fixture)...))
			want := map[string]string{"starting": "Starting", "serving": "Serving"}[stage]
			if st := statusOf(rsp); st["phase"] != want {
				t.Errorf("phase %v, want %s: %v", st["phase"], want, st["message"])
			}
			compareGolden(t, "oci-"+stage, rsp)
		})
	}
	t.Run("refused", func(t *testing.T) {
		msg := fatalMessage(run(t, newRequest(t, xr, compositionInput(t))))
		if !strings.Contains(msg, "spec.model.uri: oci:// weights are mounted as Kubernetes image volumes") || !strings.Contains(msg, "input.oci.mode: Refuse") {
			t.Errorf("the default Composition's refusal %q does not name spec.model.uri and input.oci.mode", msg)
		}
	})
}

// TestOCINewDigest: a new digest is a new model: the Deployment rolls
// onto it at once (the Deployment's rolling update keeps the old servers
// until new ones are ready), and the weights are not ready until a server
// is ready on the new image.
func TestOCINewDigest(t *testing.T) {
	xr, in := ociXR(testOCI), ociInput()
	_, obs := settle(t, xr, in, world{}, nil)
	next := "oci://registry.example.com/models/llama@sha256:" + strings.Repeat("f", 64)
	setPath(xr, next, "spec", "model", "uri")
	rsp := run(t, newRequest(t, xr, in, obs...))
	d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
	if got := d.Spec.Template.Spec.Volumes[0].Image.Reference; got != strings.TrimPrefix(next, "oci://") {
		t.Errorf("the servers mount %s, want the new digest", got)
	}
	if got := conditionReason(rsp, reason.ConditionWeightsReady); got != "ImageVolumePulling" {
		t.Errorf("WeightsReady %s, want ImageVolumePulling until a server is ready on the new digest", got)
	}
	if st := statusOf(rsp); st["phase"] != "Serving" {
		t.Errorf("phase %v, want Serving (the old servers answer): %v", st["phase"], st["message"])
	}
	rsp, _ = settle(t, xr, in, world{}, obs)
	if got := conditionReason(rsp, reason.ConditionWeightsReady); got != "ImageVolumeMounted" {
		t.Errorf("settled: WeightsReady %s, want ImageVolumeMounted", got)
	}
}
