//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
	"github.com/inferno-ai/function-inferno/test/e2e/traffic"
)

// --- 25 LoRA adapters on the real node -------------------------------------

// lora: a fake-framework claim with one adapter on the real node. Its
// adapter is pulled by its own Job (the built-in http script, in a real
// container) into its own directory of the cache volume; the servers start
// once base and adapter are pulled, and answer "model": <claim> from the
// base weights and "model": "sql" from the adapter's (each checked against
// the fake server's oracle). Then a second adapter is added under load, to
// the base model and to the first adapter: the servers roll (maxUnavailable
// 0) and no request fails; the new adapter answers from its own weights.
func (s *infernoSuite) lora(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "25 lora adapters (real node)")
	sc.onRealNode(false)
	if err := env.createTeamNamespace(ctx, realNS); err != nil {
		t.Fatal(err)
	}
	ensureRealCompositions(ctx, t)
	base := publishWeights(t, "lora-base", "inferno lora base model")
	sql := publishWeights(t, "lora-sql", "inferno lora sql adapter")
	legal := publishWeights(t, "lora-legal", "inferno lora legal adapter")
	const name = "lora"
	claim := func(adapters ...map[string]any) *unstructured.Unstructured {
		c := realClaim(t, name, base.URI, "1", 2)
		list := make([]any, len(adapters))
		for i, a := range adapters {
			list[i] = a
		}
		setField(c, list, "spec", "adapters")
		setField(c, map[string]any{"maxLoras": int64(2), "maxLoraRank": int64(8)}, "spec", "lora")
		return c
	}
	sqlAdapter := map[string]any{"name": "sql", "uri": sql.URI}
	legalAdapter := map[string]any{"name": "legal", "uri": legal.URI}

	start := time.Now()
	applyClaim(ctx, t, claim(sqlAdapter))
	waitClaimsReady(ctx, t, realNS, []string{name}, 3*time.Minute)
	sc.note("claim with one adapter Ready in %.1fs (base and adapter pulled by their own Jobs, 2 servers)", time.Since(start).Seconds())
	if jobs := pullJobs(ctx, t, realNS, name); len(jobs) != 2 {
		t.Errorf("%d pull Jobs, want 2 (the base model and the adapter)", len(jobs))
	}
	waitAdapters(ctx, t, name, map[string]string{"sql": "Serving"})

	url := serviceURL(ctx, t, realNS, name)
	answers := func(model string, w weightsSet) string {
		got, _ := firstAnswer(ctx, t, url, model, time.Minute)
		if want := oracle(t, w); got.Text != want {
			t.Errorf("model %s answered %q, want %q (from its weights)", model, got.Text, want)
		}
		return got.Weights
	}
	baseDigest, sqlDigest := answers(name, base), answers("sql", sql)
	if baseDigest == sqlDigest {
		t.Errorf("the base model and the adapter answered from the same weights %s", baseDigest)
	}
	if ids := modelIDs(ctx, t, url); strings.Join(ids, ",") != name+",sql" {
		t.Errorf("/v1/models lists %v, want [%s sql]", ids, name)
	}
	sc.note("%q answers from the base weights and \"sql\" from the adapter's (each as the oracle says); /v1/models lists both", name)

	// Add an adapter under load on the base model and on the first adapter.
	onBase := traffic.Start(traffic.Options{URL: url + "/v1/completions", Body: completionBody(name), Rate: 10, Max: 10 * 180, MaxDuration: 3 * time.Minute})
	onSQL := traffic.Start(traffic.Options{URL: url + "/v1/completions", Body: completionBody("sql"), Rate: 10, Max: 10 * 180, MaxDuration: 3 * time.Minute})
	time.Sleep(2 * time.Second)
	added := time.Now()
	applyClaim(ctx, t, claim(sqlAdapter, legalAdapter))
	waitAdapters(ctx, t, name, map[string]string{"sql": "Serving", "legal": "Serving"})
	if err := kube.Eventually(ctx, 2*time.Minute, 250*time.Millisecond, "the servers rolled out", func(ctx context.Context) (bool, string, error) {
		return deploymentSettled(ctx, realNS, name) && len(claimServerPods(ctx, t, realNS, name)) == 2, "", nil
	}); err != nil {
		t.Fatal(err)
	}
	rolled := time.Since(added)
	time.Sleep(2 * time.Second)
	baseRep, sqlRep := onBase.Stop(), onSQL.Stop()
	sc.note("adapter legal added under 2×10 req/s: pulled and served by both servers in %.1fs; base sent %d failed %d, sql sent %d failed %d", rolled.Seconds(), baseRep.Sent(), baseRep.Failed, sqlRep.Sent(), sqlRep.Failed)
	if baseRep.Failed != 0 || sqlRep.Failed != 0 {
		t.Errorf("requests failed while an adapter was added: base %d of %d (%s), sql %d of %d (%s)", baseRep.Failed, baseRep.Sent(), baseRep.Failures(5), sqlRep.Failed, sqlRep.Sent(), sqlRep.Failures(5))
	}
	if d := answers("legal", legal); d == baseDigest || d == sqlDigest {
		t.Errorf("adapter legal answered from weights %s, another model's", d)
	}
	if ids := modelIDs(ctx, t, url); strings.Join(ids, ",") != name+",legal,sql" {
		t.Errorf("/v1/models lists %v, want [%s legal sql]", ids, name)
	}
	if jobs := pullJobs(ctx, t, realNS, name); len(jobs) != 3 {
		t.Errorf("%d pull Jobs, want 3", len(jobs))
	}
	sc.note("legal answers from its own weights; the base weights and sql were pulled once each (origin: base %d, sql %d)", env.origin.Served("/lora-base/model.markov"), env.origin.Served("/lora-sql/model.markov"))
	deleteClaimsAndWait(ctx, t, realNS, []string{name})

	n, warnings := vllmAdapterObjectsAccepted(ctx, t)
	sc.note("the vLLM example's objects at every stage (fresh, pulling, adapter-failed, serving, added; %d objects) accepted by server-side apply with strict field validation (dry run), %d warnings", n, warnings)
}

// vllmAdapterObjectsAccepted server-side-applies, as a dry run with strict
// field validation, every object the function renders for the vLLM LoRA
// example (examples/lora) at each of its golden stages, in the real node's
// restricted namespace: what the fake claim above does not render (vLLM's
// --lora-modules arguments, GPU requests, /dev/shm) is accepted too, and
// draws no warning (Pod Security included). It returns the objects
// applied and the warnings.
func vllmAdapterObjectsAccepted(ctx context.Context, t *testing.T) (int, int) {
	t.Helper()
	client, err := kube.NewClient(env.admin.Config)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, stage := range []string{"fresh", "pulling", "adapter-failed", "serving", "added"} {
		for _, g := range goldenObjects(t, "lora-"+stage+".yaml", realNS) {
			if err := applyDryRun(ctx, client, g.Object); err != nil {
				t.Errorf("%s stage, %s (%s %s): %v", stage, g.Resource, g.Object.GetKind(), g.Object.GetName(), err)
			}
			n++
		}
	}
	warnings := client.TakeWarnings()
	for _, w := range warnings {
		t.Errorf("API server warning on the vLLM LoRA example's objects: %s", w)
	}
	return n, len(warnings)
}

// waitAdapters waits until the claim's status.adapters has exactly these
// phases and its AdaptersReady condition is True.
func waitAdapters(ctx context.Context, t *testing.T, name string, want map[string]string) {
	t.Helper()
	err := kube.Eventually(ctx, 3*time.Minute, 250*time.Millisecond, "status.adapters "+fmt.Sprint(want), func(ctx context.Context) (bool, string, error) {
		c, err := env.admin.Get(ctx, claimGVK, realNS, name)
		if err != nil {
			return false, "", err
		}
		list, _, _ := unstructured.NestedSlice(c.Object, "status", "adapters")
		got := map[string]string{}
		for _, e := range list {
			m, _ := e.(map[string]any)
			n, _ := m["name"].(string)
			p, _ := m["phase"].(string)
			got[n] = p
		}
		st, _, _ := kube.Condition(c, "AdaptersReady")
		return fmt.Sprint(got) == fmt.Sprint(want) && st == "True", fmt.Sprintf("%v AdaptersReady=%s", got, st), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// modelIDs are the ids /v1/models lists.
func modelIDs(ctx context.Context, t *testing.T, base string) []string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/models", nil)
	resp, err := noProxy.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, d := range r.Data {
		ids = append(ids, d.ID)
	}
	return ids
}
