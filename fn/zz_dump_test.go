package fn

import (
	"os"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestZZDumpSmall(t *testing.T) {
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
	first := run(t, newRequest(t, xr, in))
	b, _ := yaml.Marshal(first.GetDesired())
	os.WriteFile("/tmp/small-first.yaml", b, 0o644)
	rsp, _ := settle(t, xr, in, world{}, nil)
	b, _ = yaml.Marshal(rsp.GetDesired())
	os.WriteFile("/tmp/small-serving.yaml", b, 0o644)
}
