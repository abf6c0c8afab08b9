//go:build e2e

package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/traffic"
)

// Scenarios on the real node: the pull Job runs the built-in http script in
// a real container, the fake model server loads those weights and answers
// requests sent through the claim's Service, and every change is measured
// in requests sent, failed, and answered by which weights.

const (
	// realNS is the app team of the real-node scenarios.
	realNS = "team-real"
	// realComposition and realCacheComposition place a claim on the real
	// node's pool (see ensureRealCompositions).
	realComposition      = "xinferenceservices-real-node.inference.inferno.io"
	realCacheComposition = "xmodelcaches-real-node.inference.inferno.io"
	// prompt is what every request asks; maxTokens how much it generates.
	prompt    = "the model on the real node says"
	maxTokens = 12
)

// ensureRealCompositions adds the platform team's second pair of
// Compositions: the packaged ones with an Input that puts every pod on the
// real node's pool (nodeSelector and toleration of its taint), pulls
// http(s) weights with the test's curl image (the built-in script
// unchanged), stores them with local-path-provisioner, and gives the fake
// servers a memory-backed /dev/shm (to check it is one for real), and
// runs llama.cpp and Ollama claims on the e2e's llama-server and ollama
// images. Claims
// pick them with spec.compositionSelector.
func ensureRealCompositions(ctx context.Context, t *testing.T) {
	t.Helper()
	input := realNodeInput()
	input["runtimes"] = map[string]any{
		"fake":     map[string]any{"sharedMemory": true},
		"llamacpp": map[string]any{"image": llamaServerImage},
		"ollama":   map[string]any{"image": ollamaServerImage},
	}
	applyComposition(ctx, t, "composition.yaml", realComposition, realPool, input)
	applyComposition(ctx, t, "modelcache-composition.yaml", realCacheComposition, realPool, input)
}

// realNodeInput is the Input of the Compositions for the real node: every
// pod on its pool (nodeSelector and toleration of its taint), http(s)
// weights pulled with the test's curl image (the built-in script
// unchanged), volumes from local-path-provisioner.
func realNodeInput() map[string]any {
	return map[string]any{
		"apiVersion": "fn.inferno.io/v1beta1",
		"kind":       "Input",
		"scheduling": map[string]any{
			"nodeSelector": map[string]any{poolLabel: realPool},
			"tolerations":  []any{map[string]any{"key": poolLabel, "operator": "Equal", "value": realPool, "effect": "NoSchedule"}},
		},
		"pullers": map[string]any{
			"http":  map[string]any{"image": httpPullerImage},
			"https": map[string]any{"image": httpPullerImage},
		},
		"storage": map[string]any{"storageClassName": RealStorageClass, "size": "1Gi"},
	}
}

// applyComposition applies the packaged Composition in apis/<file> as
// name, labelled poolLabel=pool for claims to select, with input as its
// function's Input.
func applyComposition(ctx context.Context, t *testing.T, file, name, pool string, input map[string]any) {
	t.Helper()
	objs, err := kube.DecodeYAML(mustRead(t, filepath.Join(repoRoot(), "apis", file)))
	if err != nil || len(objs) != 1 {
		t.Fatalf("apis/%s: %v", file, err)
	}
	comp := objs[0]
	comp.SetName(name)
	labels := comp.GetLabels()
	labels[poolLabel] = pool
	comp.SetLabels(labels)
	steps, _, _ := unstructured.NestedSlice(comp.Object, "spec", "pipeline")
	steps[0].(map[string]any)["input"] = input
	setField(comp, steps, "spec", "pipeline")
	if _, err := env.admin.Apply(ctx, comp); err != nil {
		t.Fatal(err)
	}
}

// onRealPool makes a claim (InferenceService or ModelCache) choose the
// real-node Composition.
func onRealPool(c *unstructured.Unstructured) {
	setField(c, map[string]any{"matchLabels": map[string]any{poolLabel: realPool}}, "spec", "compositionSelector")
}

// realClaim is a small fake-framework claim on the real node, serving the
// weights at uri.
func realClaim(t *testing.T, name, uri, version string, replicas int64) *unstructured.Unstructured {
	c := smallClaim(t, realNS, name)
	setField(c, map[string]any{"uri": uri, "version": version, "framework": "fake"}, "spec", "model")
	setField(c, map[string]any{"min": replicas, "max": replicas}, "spec", "replicas")
	setField(c, map[string]any{"cpu": "50m", "memory": "64Mi", "gpu": int64(0)}, "spec", "resources")
	unstructured.RemoveNestedField(c.Object, "spec", "storage")
	onRealPool(c)
	return c
}

// weightsSet is one model version published on the origin.
type weightsSet struct {
	// URI is where the origin serves the weights file.
	URI string
	// Dir holds the file and a completion marker, for the oracle.
	Dir string
}

// publishWeights writes a weights file made from seed onto the origin with
// the fake server's own writer.
func publishWeights(t *testing.T, name, seed string) weightsSet {
	t.Helper()
	dir := filepath.Join(env.origin.Dir, name)
	out, err := exec.Command(env.fakeServer, "weights", "--out", dir, "--seed", seed, "--marker").CombinedOutput()
	if err != nil {
		t.Fatalf("fake-model-server weights: %v\n%s", err, out)
	}
	return weightsSet{URI: env.origin.URL + "/" + name + "/model.markov", Dir: dir}
}

// oracle is the text the fake server answers for the prompt from the
// weights in dir: `fake-model-server generate`, run here.
func oracle(t *testing.T, w weightsSet) string {
	t.Helper()
	out, err := exec.Command(env.fakeServer, "generate", "--model-dir", w.Dir, "--prompt", prompt, "--max-tokens", fmt.Sprint(maxTokens)).Output()
	if err != nil {
		t.Fatalf("fake-model-server generate: %v", err)
	}
	return string(out)
}

// serviceURL is http://<ClusterIP>:<port> of a Service: the host reaches it
// through kube-proxy's rules, as any client in the cluster would.
func serviceURL(ctx context.Context, t *testing.T, ns, name string) string {
	t.Helper()
	svc, err := env.admin.Typed.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
}

// waitServiceURL is serviceURL once the Service exists: it comes with the
// first servers, after the pull.
func waitServiceURL(ctx context.Context, t *testing.T, ns, name string, timeout time.Duration) string {
	t.Helper()
	var url string
	if err := kube.Eventually(ctx, timeout, 100*time.Millisecond, "Service "+ns+"/"+name, func(ctx context.Context) (bool, string, error) {
		svc, err := env.admin.Typed.CoreV1().Services(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error(), nil
		}
		url = fmt.Sprintf("http://%s:%d", svc.Spec.ClusterIP, svc.Spec.Ports[0].Port)
		return true, "", nil
	}); err != nil {
		t.Fatal(err)
	}
	return url
}

func completionBody(model string) []byte {
	b, _ := json.Marshal(map[string]any{"model": model, "prompt": prompt, "max_tokens": maxTokens})
	return b
}

// completion is one answered request.
type completion struct {
	Text, Fingerprint     string
	Weights, Version, Pod string
}

var noProxy = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}

func complete(ctx context.Context, base, model string) (completion, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/completions", bytes.NewReader(completionBody(model)))
	if err != nil {
		return completion{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := noProxy.Do(req)
	if err != nil {
		return completion{}, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return completion{}, fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	var r struct {
		SystemFingerprint string `json:"system_fingerprint"`
		Choices           []struct {
			Text string `json:"text"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &r); err != nil || len(r.Choices) != 1 {
		return completion{}, fmt.Errorf("answer %q: %v", b, err)
	}
	return completion{Text: r.Choices[0].Text, Fingerprint: r.SystemFingerprint,
		Weights: resp.Header.Get(traffic.HeaderWeights), Version: resp.Header.Get(traffic.HeaderVersion), Pod: resp.Header.Get(traffic.HeaderPod)}, nil
}

// models is the fake server's /v1/models entry.
type models struct {
	ID, Version, Digest string
	UID, GID            int
}

func listModels(ctx context.Context, base string) (models, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models", nil)
	resp, err := noProxy.Do(req)
	if err != nil {
		return models{}, err
	}
	defer resp.Body.Close()
	var r struct {
		Data []struct {
			ID      string `json:"id"`
			Version string `json:"version"`
			Digest  string `json:"weights_digest"`
			UID     int    `json:"uid"`
			GID     int    `json:"gid"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Data) != 1 {
		return models{}, fmt.Errorf("/v1/models: %v", err)
	}
	d := r.Data[0]
	return models{ID: d.ID, Version: d.Version, Digest: d.Digest, UID: d.UID, GID: d.GID}, nil
}

// firstAnswer polls the Service until a completion is answered, and
// returns it with the time it came.
func firstAnswer(ctx context.Context, t *testing.T, base, model string, timeout time.Duration) (completion, time.Time) {
	t.Helper()
	var got completion
	err := kube.Eventually(ctx, timeout, 100*time.Millisecond, "a completion answered through "+base, func(ctx context.Context) (bool, string, error) {
		c, err := complete(ctx, base, model)
		if err != nil {
			return false, err.Error(), nil
		}
		got = c
		return true, "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got, time.Now()
}

// pullJobs lists a claim's pull Jobs.
func pullJobs(ctx context.Context, t *testing.T, ns, claim string) []batchv1.Job {
	t.Helper()
	l, err := env.admin.Typed.BatchV1().Jobs(ns).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + claim})
	if err != nil {
		t.Fatal(err)
	}
	return l.Items
}

// waitServiceProgrammed waits until a Service's EndpointSlices list want
// ready endpoints and kube-proxy on the real node has written them into
// its rules: only then does a request loop measure the split the servers
// make, rather than the moment the rules lag behind a pod that is Ready.
func waitServiceProgrammed(ctx context.Context, t *testing.T, ns, svc string, want int) {
	t.Helper()
	var seen time.Time
	err := kube.Eventually(ctx, time.Minute, 100*time.Millisecond, fmt.Sprintf("Service %s: %d ready endpoints programmed by kube-proxy", svc, want), func(ctx context.Context) (bool, string, error) {
		if seen.IsZero() {
			l, err := env.admin.Typed.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=" + svc})
			if err != nil {
				return false, "", err
			}
			ready := 0
			for _, s := range l.Items {
				for _, e := range s.Endpoints {
					if e.Conditions.Ready != nil && *e.Conditions.Ready {
						ready++
					}
				}
			}
			if ready != want {
				return false, fmt.Sprintf("%d ready endpoints", ready), nil
			}
			seen = time.Now()
		}
		ok, err := env.node.ProxySynced(ctx, seen)
		return ok, "kube-proxy has not synced since", err
	})
	if err != nil {
		t.Fatal(err)
	}
}
