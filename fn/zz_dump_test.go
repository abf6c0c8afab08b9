package fn

import (
	"fmt"
	"testing"
)

func TestZZLife(t *testing.T) {
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
	type st struct{ pvc, job, dep map[string]any }
	seq := []st{
		{},
		{pvc: map[string]any{"phase": "Pending"}, job: map[string]any{}},
		{pvc: boundPVC(), job: map[string]any{}},
		{pvc: boundPVC(), job: jobRunningStatus()},
		{pvc: boundPVC(), job: jobCompleteStatus()},
		{pvc: boundPVC(), job: jobCompleteStatus(), dep: map[string]any{}},
		{pvc: boundPVC(), job: jobCompleteStatus(), dep: deploymentStatus(1, 0)},
		{pvc: boundPVC(), job: jobCompleteStatus(), dep: deploymentStatus(1, 1)},
	}
	var prev = run(t, newRequest(t, xr, in))
	for i, s := range seq {
		var obs []observedObject
		for _, name := range desiredNames(prev) {
			obj := prev.GetDesired().GetResources()[name].GetResource().AsMap()
			var status map[string]any
			switch obj["kind"] {
			case "PersistentVolumeClaim":
				status = s.pvc
			case "Job":
				status = s.job
			case "Deployment":
				status = s.dep
			case "Service":
				status = map[string]any{}
			}
			if status == nil {
				continue
			}
			obs = append(obs, observedFrom(t, prev, name, status))
		}
		rsp := run(t, newRequest(t, xr, in, obs...))
		stat := rsp.GetDesired().GetComposite().GetResource().AsMap()["status"]
		fmt.Printf("step %d: objects %v ready=%v\n  status %v\n", i, desiredNames(rsp), rsp.GetDesired().GetComposite().GetReady(), stat)
		for _, c := range rsp.GetConditions() {
			fmt.Printf("  cond %s %s %s %q\n", c.GetType(), c.GetStatus(), c.GetReason(), c.GetMessage())
		}
		for _, n := range desiredNames(rsp) {
			fmt.Printf("  %s ready=%v\n", n, rsp.GetDesired().GetResources()[n].GetReady())
		}
		prev = rsp
	}
}
