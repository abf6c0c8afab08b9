package fn

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
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
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"
)

// The ModelCache examples: the cache, and a service on it.
const (
	cacheXRPath   = "../examples/modelcache/xr.yaml"
	cacheURI      = "hf://meta-llama/Llama-3.1-8B-Instruct"
	onCacheXRPath = "../examples/modelcache/service-xr.yaml"
)

// cacheStages are the states of the ModelCache example: the world its
// controllers make.
var cacheStages = []struct {
	name  string
	world world
}{
	{"pulling", world{PullRunning: true}},
	{"ready", world{}},
	{"failed", world{FailPull: map[string]bool{cacheURI: true}}},
}

// withRequired puts what Crossplane fetched for a service on a ModelCache
// into a request, each of objs under its requirement by its kind: the
// ModelCache claim, its XModelCache composite, its volume claim. A claim
// given without a composite or volume claim among objs comes with those its
// composition made (cacheOwnObjects), as a cluster has them. None means
// each resolved and not found.
func withRequired(t testing.TB, req *fnv1.RunFunctionRequest, objs ...map[string]any) *fnv1.RunFunctionRequest {
	t.Helper()
	keys := map[string]string{
		"ModelCache": observe.RequirementCache, "XModelCache": observe.RequirementCacheComposite,
		"PersistentVolumeClaim": observe.RequirementCacheVolume,
	}
	own := true
	for _, o := range objs {
		if o["kind"] != "ModelCache" {
			own = false
		}
	}
	all := objs
	if own {
		for _, o := range objs {
			xr, pvc := cacheOwnObjects(o)
			all = append(all, xr, pvc)
		}
	}
	req.RequiredResources = map[string]*fnv1.Resources{}
	for _, key := range keys {
		req.RequiredResources[key] = &fnv1.Resources{}
	}
	for _, o := range all {
		key, ok := keys[fmt.Sprint(o["kind"])]
		if !ok {
			t.Fatalf("withRequired: a %v is nothing a service on a cache asks for", o["kind"])
		}
		req.RequiredResources[key].Items = append(req.RequiredResources[key].Items, &fnv1.Resource{Resource: mustStruct(t, o)})
	}
	return req
}

// cacheCompositeUID is the uid of a ModelCache's composite in what a
// service on the cache is given (a cluster gives every composite one).
const cacheCompositeUID = "8e6f5a4c-2b1d-4c3e-9f70-5d1a2b3c4d5e"

// cacheOwnObjects are the composite Crossplane made for ModelCache claim
// and the volume claim its composition made under that composite
// (controlled by it, labelled as Crossplane labels composed objects): what
// Crossplane fetches besides the claim for a service on the cache.
func cacheOwnObjects(claim map[string]any) (xr, pvc map[string]any) {
	meta := claim["metadata"].(map[string]any)
	name, ns := meta["name"].(string), meta["namespace"].(string)
	xrName := name + "-m4x2p"
	labels := map[string]any{resolve.LabelClaimName: name, resolve.LabelClaimNamespace: ns, resolve.LabelComposite: xrName}
	xr = map[string]any{
		"apiVersion": "inference.inferno.io/v1alpha1", "kind": "XModelCache",
		"metadata": map[string]any{"name": xrName, "uid": cacheCompositeUID, "labels": labels},
	}
	pvc = map[string]any{
		"apiVersion": "v1", "kind": "PersistentVolumeClaim",
		"metadata": map[string]any{
			"name": resolve.CacheVolume(name), "namespace": ns, "labels": maps.Clone(labels),
			"ownerReferences": []any{map[string]any{
				"apiVersion": "inference.inferno.io/v1alpha1", "kind": "XModelCache", "name": xrName, "uid": cacheCompositeUID,
				"controller": true, "blockOwnerDeletion": true,
			}},
		},
		"status": map[string]any{"phase": "Bound"},
	}
	return xr, pvc
}

// cacheClaim is the ModelCache claim of examples/modelcache/claim.yaml with
// the status the composite reported in rsp, as Crossplane copies it to the
// claim: what a service's function call is given.
func cacheClaim(t testing.TB, rsp *fnv1.RunFunctionResponse) map[string]any {
	t.Helper()
	c := readYAML(t, "../examples/modelcache/claim.yaml")
	c["status"] = statusOf(rsp)
	return c
}

// TestModelCacheGolden renders the ModelCache example fresh and at each
// stage, and a service on it against each stage of the cache (and none),
// comparing with fn/testdata/golden/modelcache-*.yaml. With -update it
// rewrites them, examples/modelcache/observed/ (the cache's composed
// resources) and examples/modelcache/required/ (the cache claim a service's
// call is given).
func TestModelCacheGolden(t *testing.T) {
	cache := readYAML(t, cacheXRPath)
	in := compositionInput(t)
	compareGolden(t, "modelcache-fresh", run(t, newRequest(t, cache, in)))

	for _, st := range cacheStages {
		t.Run(st.name, func(t *testing.T) {
			_, obs := settle(t, cache, in, st.world, nil)
			fixture := filepath.Join("..", "examples", "modelcache", "observed", st.name+".yaml")
			if *update {
				writeObserved(t, fixture, "examples/modelcache/xr.yaml", st.name, obs)
			}
			rsp := run(t, newRequest(t, cache, in, readObserved(t, fixture)...))
			compareGolden(t, "modelcache-"+st.name, rsp)

			required := filepath.Join("..", "examples", "modelcache", "required", st.name+".yaml")
			if *update {
				writeRequired(t, required, st.name, cacheClaim(t, rsp))
			}
			svc := readYAML(t, onCacheXRPath)
			claim := readYAML(t, required)
			var start []observedObject
			if st.name == "ready" {
				_, start = settle(t, svc, in, world{}, nil, claim)
			}
			compareGolden(t, "modelcache-service-"+st.name, run(t, withRequired(t, newRequest(t, svc, in, start...), claim)))
		})
	}
	t.Run("missing", func(t *testing.T) {
		compareGolden(t, "modelcache-service-missing", run(t, withRequired(t, newRequest(t, readYAML(t, onCacheXRPath), in))))
	})
	// A status that names another volume claim and directory than the
	// cache's name and spec give: not followed (TestCacheStatusNotFollowed).
	t.Run("tampered", func(t *testing.T) {
		tampered := readYAML(t, filepath.Join("..", "examples", "modelcache", "required", "tampered.yaml"))
		compareGolden(t, "modelcache-service-tampered", run(t, withRequired(t, newRequest(t, readYAML(t, onCacheXRPath), in), tampered)))
	})
}

func writeRequired(t *testing.T, path, stage string, obj map[string]any) {
	t.Helper()
	var buf bytes.Buffer
	buf.WriteString("# The ModelCache claim of examples/modelcache/claim.yaml at the " + stage + " stage, then\n")
	buf.WriteString("# its composite and the volume claim its composition made, as\n")
	buf.WriteString("# `crossplane render --required-resources` passes them to a service on the cache.\n")
	buf.WriteString("# Generated by `go test ./fn -run TestModelCacheGolden -update`.\n")
	xr, pvc := cacheOwnObjects(obj)
	for i, o := range []map[string]any{obj, xr, pvc} {
		if i > 0 {
			buf.WriteString("---\n")
		}
		b, err := yaml.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestModelCacheComposes: a cache composes its volume and one pull Job per
// revision, each into its own directory, and reports each revision's path.
func TestModelCacheComposes(t *testing.T) {
	cache := readYAML(t, cacheXRPath)
	setPath(cache, []any{"main", "v2"}, "spec", "revisions")
	rsp, _ := settle(t, cache, nil, world{}, nil)
	var jobs []string
	for _, n := range desiredNames(rsp) {
		if strings.HasPrefix(n, render.ResourceJobPrefix) {
			jobs = append(jobs, n)
		}
	}
	if len(jobs) != 2 || !slices.Contains(desiredNames(rsp), render.ResourcePVC) || len(desiredNames(rsp)) != 3 {
		t.Fatalf("desired %v, want the volume and two pull Jobs", desiredNames(rsp))
	}
	pvc := desiredMap(t, rsp, render.ResourcePVC)
	if name, _ := nested(pvc, "metadata", "name"); name != "llama-3-1-8b-cache" {
		t.Errorf("volume %v, want llama-3-1-8b-cache", name)
	}
	st := statusOf(rsp)
	if st["phase"] != "Ready" || st["pvcName"] != "llama-3-1-8b-cache" {
		t.Errorf("status %v, want phase Ready, pvcName llama-3-1-8b-cache", st)
	}
	revs, _ := st["revisions"].([]any)
	paths := map[string]bool{}
	for _, r := range revs {
		m := r.(map[string]any)
		if m["phase"] != "Ready" {
			t.Errorf("revision %v: phase %v, want Ready", m["revision"], m["phase"])
		}
		paths[m["path"].(string)] = true
	}
	if len(revs) != 2 || len(paths) != 2 {
		t.Errorf("revisions %v: want two, in two directories", revs)
	}
	for _, n := range desiredNames(rsp) {
		if readiness(rsp, n) != fnv1.Ready_READY_TRUE {
			t.Errorf("%s not ready once pulled", n)
		}
	}
}

// TestServiceOnCache: a service with a cacheRef asks for the cache, pulls
// nothing, makes no volume, waits for the cache's revision, then mounts the
// cache's volume read-only at the revision's directory. Two services share
// one cache.
func TestServiceOnCache(t *testing.T) {
	cache := readYAML(t, cacheXRPath)
	ready, _ := settle(t, cache, nil, world{}, nil)
	claim := cacheClaim(t, ready)
	wantPath := statusOf(ready)["revisions"].([]any)[0].(map[string]any)["path"].(string)

	svc := readYAML(t, onCacheXRPath)
	// The first call of a reconcile: the cache is not fetched yet.
	first := run(t, newRequest(t, svc, nil))
	want := &fnv1.ResourceSelector{ApiVersion: "inference.inferno.io/v1alpha1", Kind: "ModelCache", Match: &fnv1.ResourceSelector_MatchName{MatchName: "llama-3-1-8b"}, Namespace: proto.String("team-a")}
	if got := first.GetRequirements().GetResources()[observe.RequirementCache]; !proto.Equal(got, want) {
		t.Errorf("requirement %v, want %v", got, want)
	}
	if got := first.GetRequirements().GetExtraResources()[observe.RequirementCache]; !proto.Equal(got, want) { //nolint:staticcheck // Crossplane v1's field.
		t.Errorf("deprecated requirement %v, want %v", got, want)
	}
	if len(desiredNames(first)) != 0 {
		t.Errorf("desired %v before the cache is known, want nothing", desiredNames(first))
	}

	served := map[string]render.Weights{}
	for _, name := range []string{"chat", "chat-2"} {
		x := readYAML(t, onCacheXRPath)
		setPath(x, name, "metadata", "labels", resolve.LabelClaimName)
		rsp, _ := settle(t, x, nil, world{}, nil, claim)
		names := desiredNames(rsp)
		if diff := cmp.Diff([]string{render.ResourceDeployment, render.ResourceService}, names); diff != "" {
			t.Errorf("%s desired (-want +got): no volume, no pull Job\n%s", name, diff)
		}
		d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
		w := mustWeights(t, d)
		served[name] = w
		for _, v := range d.Spec.Template.Spec.Volumes {
			if v.Name == render.VolumeWeights && (v.PersistentVolumeClaim == nil || !v.PersistentVolumeClaim.ReadOnly) {
				t.Errorf("%s mounts the cache's volume writable", name)
			}
		}
		if st := statusOf(rsp); st["phase"] != "Serving" {
			t.Errorf("%s phase %v, want Serving: %v", name, st["phase"], st["message"])
		}
	}
	if served["chat"].Claim != "llama-3-1-8b-cache" || served["chat"].SubPath != wantPath || served["chat"] != served["chat-2"] {
		t.Errorf("served weights %v, want both on llama-3-1-8b-cache at %s", served, wantPath)
	}
}

// TestServiceOnCacheStates: the reason and phase a service reports for each
// state of its cache, before and after its servers exist.
func TestServiceOnCacheStates(t *testing.T) {
	cache := readYAML(t, cacheXRPath)
	stage := func(w world) map[string]any {
		rsp, _ := settle(t, cache, nil, w, nil)
		return cacheClaim(t, rsp)
	}
	readyClaim := stage(world{})
	svc := readYAML(t, onCacheXRPath)
	_, serving := settle(t, svc, nil, world{}, nil, readyClaim)

	other := readyClaim
	otherURI := readYAML(t, onCacheXRPath)
	setPath(otherURI, "hf://other/model", "spec", "model", "uri")
	noRev := readYAML(t, onCacheXRPath)
	setPath(noRev, "v9", "spec", "model", "revision")

	cases := map[string]struct {
		xr       map[string]any
		cache    []map[string]any
		observed []observedObject
		reason   string
		phase    string
		servers  bool
	}{
		"Missing":              {xr: svc, reason: "CacheMissing", phase: "Pending"},
		"Pulling":              {xr: svc, cache: []map[string]any{stage(world{PullRunning: true})}, reason: "CachePulling", phase: "Pulling"},
		"Failed":               {xr: svc, cache: []map[string]any{stage(world{FailPull: map[string]bool{cacheURI: true}})}, reason: "CacheFailed", phase: "Failed"},
		"Mismatch":             {xr: otherURI, cache: []map[string]any{other}, reason: "CacheMismatch", phase: "Failed"},
		"RevisionMissing":      {xr: noRev, cache: []map[string]any{other}, reason: "CacheRevisionMissing", phase: "Failed"},
		"Ready":                {xr: svc, cache: []map[string]any{readyClaim}, observed: serving, reason: "Cached", phase: "Serving", servers: true},
		"DeletedUnderServers":  {xr: svc, observed: serving, reason: "CacheMissing", phase: "Degraded", servers: true},
		"FailedServersRunning": {xr: svc, cache: []map[string]any{stage(world{FailPull: map[string]bool{cacheURI: true}})}, observed: serving, reason: "CacheFailed", phase: "Degraded", servers: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, withRequired(t, newRequest(t, tc.xr, nil, tc.observed...), tc.cache...))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			var weights *cond
			for _, c := range conditionsOf(rsp) {
				if c.Type == reason.ConditionWeightsReady {
					weights = &c
				}
			}
			if weights == nil || weights.Reason != tc.reason {
				t.Errorf("WeightsReady %+v, want reason %s (%s)", weights, tc.reason, conditionMessage(rsp, reason.ConditionWeightsReady))
			}
			if st := statusOf(rsp); st["phase"] != tc.phase {
				t.Errorf("phase %v, want %s: %v", st["phase"], tc.phase, st["message"])
			}
			// Crossplane calls a composite of no (or only ready) composed
			// resources ready: the function holds it while the cache is not.
			if held := rsp.GetDesired().GetComposite().GetReady() == fnv1.Ready_READY_FALSE; held != (tc.reason != "Cached") {
				t.Errorf("composite held not ready: %v, want %v", held, tc.reason != "Cached")
			}
			if _, ok := rsp.GetDesired().GetResources()[render.ResourceDeployment]; ok != tc.servers {
				t.Errorf("Deployment returned: %v, want %v (servers wait for the cache, and once they exist are kept)", ok, tc.servers)
			}
		})
	}
}

// TestCacheStatusNotFollowed: whoever can write a ModelCache's status
// (Crossplane's aggregated edit role grants it) cannot choose what a
// service's servers mount. The volume and directory are derived from the
// cache's name and spec; a status naming another claim of the namespace,
// or another directory, changes nothing the servers mount, before or after
// they exist, and is reported as a warning. Status is read for the phase.
func TestCacheStatusNotFollowed(t *testing.T) {
	cache := readYAML(t, cacheXRPath)
	ready, _ := settle(t, cache, nil, world{}, nil)
	honest := cacheClaim(t, ready)
	svc := readYAML(t, onCacheXRPath)
	want, serving := settle(t, svc, nil, world{}, nil, honest)
	wantDeploy := desiredObject[appsv1.Deployment](t, want, render.ResourceDeployment)
	wantWeights := render.Weights{ID: "b76ee785", Claim: "llama-3-1-8b-cache", SubPath: "b76ee785"}
	if got := mustWeights(t, wantDeploy); got != wantWeights {
		t.Fatalf("on the honest status the servers mount %+v, want %+v", got, wantWeights)
	}

	tamper := func(pvc, path string) map[string]any {
		c := readYAML(t, "../examples/modelcache/claim.yaml")
		st := statusOf(ready)
		c["status"] = st
		st["pvcName"] = pvc
		st["revisions"].([]any)[0].(map[string]any)["path"] = path
		return c
	}
	cases := map[string]struct {
		cache   map[string]any
		warning bool
	}{
		"AnotherClaim":          {cache: tamper("team-a-secrets", "b76ee785"), warning: true},
		"AnotherDirectory":      {cache: tamper("llama-3-1-8b-cache", "../other-model"), warning: true},
		"Both":                  {cache: tamper("postgres-data", "pgdata"), warning: true},
		"Empty":                 {cache: tamper("", "")},
		"AnotherCachesVolume":   {cache: tamper("mistral-7b-cache", "0badf00d"), warning: true},
		"HonestStatusNoWarning": {cache: honest},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			for _, observed := range [][]observedObject{nil, serving} {
				rsp := run(t, withRequired(t, newRequest(t, svc, nil, observed...), tc.cache))
				if msg := fatalMessage(rsp); msg != "" {
					t.Fatal(msg)
				}
				d := desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment)
				if diff := cmp.Diff(wantDeploy.Spec.Template, d.Spec.Template); diff != "" {
					t.Errorf("a tampered status changes the servers' pod template (with %d observed) (-honest +tampered):\n%s", len(observed), diff)
				}
				for _, v := range d.Spec.Template.Spec.Volumes {
					if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName != "llama-3-1-8b-cache" {
						t.Errorf("the servers mount claim %s, want only the cache's llama-3-1-8b-cache", v.PersistentVolumeClaim.ClaimName)
					}
				}
				if msg := conditionMessage(rsp, reason.ConditionWeightsReady); !strings.Contains(msg, "volume llama-3-1-8b-cache, directory b76ee785") {
					t.Errorf("WeightsReady %q does not name the derived volume and directory", msg)
				}
				_, warned := warningWith(rsp, "status is ignored")
				if warned != tc.warning {
					t.Errorf("warned that the status is ignored: %v, want %v; warnings: %v", warned, tc.warning, warningsOf(rsp))
				}
			}
		})
	}

	// A status cannot add a revision: one the spec does not list is
	// missing, however Ready the status says it is.
	t.Run("UnlistedRevision", func(t *testing.T) {
		c := tamper("llama-3-1-8b-cache", "b76ee785")
		st := c["status"].(map[string]any)
		st["revisions"] = append(st["revisions"].([]any), map[string]any{"revision": "v9", "path": "elsewhere", "phase": "Ready"})
		x := readYAML(t, onCacheXRPath)
		setPath(x, "v9", "spec", "model", "revision")
		rsp := run(t, withRequired(t, newRequest(t, x, nil), c))
		if msg := conditionMessage(rsp, reason.ConditionWeightsReady); !strings.Contains(msg, `does not pull revision "v9"`) {
			t.Errorf("WeightsReady %q: a revision only the status lists was served", msg)
		}
		if names := desiredNames(rsp); len(names) != 0 {
			t.Errorf("desired %v for a revision the cache does not pull", names)
		}
	})
}

// TestCacheNamesDerivedAsTheCacheNamesThem: for every revision of a
// cache, and for the default revision, the volume and directory a service
// derives from the cache's name and spec are those the cache's own
// composition composes and reports: the two sides name them with the
// same functions.
func TestCacheNamesDerivedAsTheCacheNamesThem(t *testing.T) {
	for name, revisions := range map[string][]any{"Default": nil, "Several": {"main", "v2", "refs/pr/7"}} {
		t.Run(name, func(t *testing.T) {
			cache := readYAML(t, cacheXRPath)
			claimRevisions := revisions
			if revisions == nil {
				delete(cache["spec"].(map[string]any), "revisions")
			} else {
				setPath(cache, revisions, "spec", "revisions")
			}
			ready, _ := settle(t, cache, nil, world{}, nil)
			claim := cacheClaim(t, ready)
			if claimRevisions == nil {
				delete(claim["spec"].(map[string]any), "revisions")
			} else {
				setPath(claim, claimRevisions, "spec", "revisions")
			}
			st := statusOf(ready)
			for _, r := range st["revisions"].([]any) {
				r := r.(map[string]any)
				x := readYAML(t, onCacheXRPath)
				if rev, _ := r["revision"].(string); rev != "" {
					setPath(x, rev, "spec", "model", "revision")
				} else {
					delete(x["spec"].(map[string]any)["model"].(map[string]any), "revision")
				}
				rsp, _ := settle(t, x, nil, world{}, nil, claim)
				got := mustWeights(t, desiredObject[appsv1.Deployment](t, rsp, render.ResourceDeployment))
				if got.Claim != st["pvcName"] || got.SubPath != r["path"] {
					t.Errorf("revision %q: the servers mount %s at %s; the cache composes %v and pulls it into %v", r["revision"], got.Claim, got.SubPath, st["pvcName"], r["path"])
				}
			}
		})
	}
}

// TestCacheVolumeIsTheCaches: a service on a ModelCache mounts the cache's
// volume claim <cache>-cache only when the cache's composite controls it.
// Whoever may create volume claims in the namespace could make one of that
// name first (bound to a volume of its choosing, or cloned from another
// claim, the puller's marker already in it), and the servers would serve
// weights no pull under the policy put there. Such a volume refuses the
// service by name, at any stage of the cache and whether or not its servers
// exist (a refusal keeps what Crossplane composed); a volume or composite
// not there (yet) holds the servers, as a cache still pulling does.
func TestCacheVolumeIsTheCaches(t *testing.T) {
	cache := readYAML(t, cacheXRPath)
	readyRsp, _ := settle(t, cache, nil, world{}, nil)
	ready := cacheClaim(t, readyRsp)
	pullingRsp, _ := settle(t, cache, nil, world{PullRunning: true}, nil)
	pulling := cacheClaim(t, pullingRsp)
	xr, own := cacheOwnObjects(ready)
	svc := readYAML(t, onCacheXRPath)
	_, serving := settle(t, svc, nil, world{}, nil, ready)

	volume := func(edit func(meta map[string]any)) map[string]any {
		pvc := cloneMap(own)
		edit(pvc["metadata"].(map[string]any))
		return pvc
	}
	ownerRef := func(m map[string]any) map[string]any { return m["ownerReferences"].([]any)[0].(map[string]any) }
	refused := map[string]struct {
		cache, pvc map[string]any
		says       string
	}{
		"MadeByHand":        {ready, volume(func(m map[string]any) { delete(m, "ownerReferences"); delete(m, "labels") }), "controlled by nobody"},
		"MadeByHandPulling": {pulling, volume(func(m map[string]any) { delete(m, "ownerReferences"); delete(m, "labels") }), "controlled by nobody"},
		// Crossplane's label is anyone's to write.
		"CompositeLabelOnly": {ready, volume(func(m map[string]any) { delete(m, "ownerReferences") }), "controlled by nobody"},
		"ControllerOfAnotherUID": {ready, volume(func(m map[string]any) {
			ownerRef(m)["uid"] = "00000000-0000-4000-8000-000000000000"
		}), "names XModelCache llama-3-1-8b-m4x2p with uid 00000000-0000-4000-8000-000000000000"},
		"AnotherController": {ready, volume(func(m map[string]any) {
			m["ownerReferences"] = []any{map[string]any{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "postgres", "uid": "11111111-0000-4000-8000-000000000000", "controller": true}}
		}), "controlled by StatefulSet postgres"},
		"OwnerNotController": {ready, volume(func(m map[string]any) { ownerRef(m)["controller"] = false }), "controlled by nobody"},
	}
	for name, tc := range refused {
		t.Run(name, func(t *testing.T) {
			for _, observed := range [][]observedObject{nil, serving} {
				rsp := run(t, withRequired(t, newRequest(t, svc, nil, observed...), tc.cache, xr, tc.pvc))
				msg := fatalMessage(rsp)
				for _, want := range []string{"spec.model.cacheRef.name:", "volume claim llama-3-1-8b-cache", "is not the cache's own", tc.says, "kubectl delete -n team-a pvc/llama-3-1-8b-cache"} {
					if !strings.Contains(msg, want) {
						t.Errorf("with %d observed: the refusal does not say %q: %q", len(observed), want, msg)
					}
				}
				if names := desiredNames(rsp); len(names) != 0 {
					t.Errorf("with %d observed: desired %v on a volume that is not the cache's", len(observed), names)
				}
			}
		})
	}

	held := map[string]struct {
		required []map[string]any
		reason   string
	}{
		"VolumeNotMadeYet":    {[]map[string]any{ready, xr}, "CachePulling"},
		"CompositeGone":       {[]map[string]any{ready, own}, "CachePulling"},
		"VolumeOfNoComposite": {[]map[string]any{ready, volume(func(m map[string]any) { delete(m, "ownerReferences") })}, "CachePulling"},
		"Own":                 {[]map[string]any{ready, xr, own}, "Cached"},
	}
	for name, tc := range held {
		t.Run(name, func(t *testing.T) {
			rsp := run(t, withRequired(t, newRequest(t, svc, nil), tc.required...))
			if msg := fatalMessage(rsp); msg != "" {
				t.Fatal(msg)
			}
			if got := conditionReason(rsp, reason.ConditionWeightsReady); got != tc.reason {
				t.Errorf("WeightsReady reason %s, want %s (%s)", got, tc.reason, conditionMessage(rsp, reason.ConditionWeightsReady))
			}
			if _, ok := rsp.GetDesired().GetResources()[render.ResourceDeployment]; ok != (tc.reason == "Cached") {
				t.Errorf("Deployment returned: %v, want %v: the servers start only on the cache's own volume", ok, tc.reason == "Cached")
			}
		})
	}

	// Crossplane has fetched the claim and not yet the rest (a
	// Crossplane that resolves one requirement at a time): a wait.
	t.Run("VolumeNotFetched", func(t *testing.T) {
		req := withRequired(t, newRequest(t, svc, nil), ready)
		delete(req.RequiredResources, observe.RequirementCacheVolume)
		rsp := run(t, req)
		if got := conditionReason(rsp, reason.ConditionWeightsReady); got != "CacheUnresolved" {
			t.Errorf("WeightsReady reason %s, want CacheUnresolved (%s)", got, conditionMessage(rsp, reason.ConditionWeightsReady))
		}
		if names := desiredNames(rsp); len(names) != 0 {
			t.Errorf("desired %v before the volume is fetched", names)
		}
	})
}
