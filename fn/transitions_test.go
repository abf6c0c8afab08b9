package fn

import (
	"slices"
	"testing"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/proto"
)

// TestStatusChangesOverALife walks a small claim through what a cluster
// reports one step at a time (the volume Pending then Bound, the Job
// created, running, complete, the Deployment created, starting, available)
// and counts how often what the function writes to the composite changes:
// its status fields and its conditions. Each change costs Crossplane a
// status write of the composite, one of the claim, and a reconcile that
// re-applies every composed object (docs/performance.md), so the calls
// that create an object say what the call that first sees it will, and the
// life of a claim is four statuses: pulling with the volume unbound,
// pulling, starting, serving.
func TestStatusChangesOverALife(t *testing.T) {
	xr := mustYAML(`
apiVersion: inference.inferno.io/v1alpha1
kind: XInferenceService
metadata:
  name: s-1-abcde
  labels:
    crossplane.io/claim-name: s-1
    crossplane.io/claim-namespace: scale
spec:
  model: {uri: "hf://e2e/tiny-s-1", version: "1", framework: fake}
  replicas: {min: 1, max: 1}
  resources: {cpu: 100m, memory: 256Mi, gpu: 0}
  storage: {size: 1Gi}
`)
	in := compositionInput(t)
	type world struct{ pvc, job, dep map[string]any }
	life := []world{
		{},
		{pvc: map[string]any{"phase": "Pending"}, job: map[string]any{}},
		{pvc: boundPVC(), job: map[string]any{}},
		{pvc: boundPVC(), job: jobRunningStatus()},
		{pvc: boundPVC(), job: jobCompleteStatus()},
		{pvc: boundPVC(), job: jobCompleteStatus(), dep: map[string]any{}},
		{pvc: boundPVC(), job: jobCompleteStatus(), dep: deploymentStatus(1, 0)},
		{pvc: boundPVC(), job: jobCompleteStatus(), dep: deploymentStatus(1, 1)},
	}
	var phases []string
	// The first call's is the first status; each one that differs from
	// the call before it is one more.
	changes := 1
	prev := run(t, newRequest(t, xr, in))
	for _, w := range life {
		var obs []observedObject
		for _, name := range desiredNames(prev) {
			status := map[string]map[string]any{"PersistentVolumeClaim": w.pvc, "Job": w.job, "Deployment": w.dep, "Service": {}}[prev.GetDesired().GetResources()[name].GetResource().AsMap()["kind"].(string)]
			if status != nil {
				obs = append(obs, observedFrom(t, prev, name, status))
			}
		}
		rsp := run(t, newRequest(t, xr, in, obs...))
		if msg := fatalMessage(rsp); msg != "" {
			t.Fatal(msg)
		}
		if !proto.Equal(prev.GetDesired().GetComposite().GetResource(), rsp.GetDesired().GetComposite().GetResource()) ||
			!slices.EqualFunc(prev.GetConditions(), rsp.GetConditions(), func(a, b *fnv1.Condition) bool { return proto.Equal(a, b) }) {
			changes++
		}
		phases = append(phases, statusOf(rsp)["phase"].(string))
		prev = rsp
	}
	want := []string{"Pulling", "Pulling", "Pulling", "Pulling", "Starting", "Starting", "Starting", "Serving"}
	if diff := cmp.Diff(want, phases); diff != "" {
		t.Errorf("phases over the life (-want +got):\n%s", diff)
	}
	if changes != 4 {
		t.Errorf("the composite's status and conditions changed %d times over the life of a claim, want 4", changes)
	}
}
