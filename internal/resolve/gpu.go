package resolve

import (
	"slices"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Devices is how each server's GPUs are requested through Dynamic Resource
// Allocation (input.gpu.dra): Count devices of the DeviceClass Class that
// satisfy every one of Selectors, the platform's CEL expressions (the
// pool's, then those of the claim's GPU type). A claim chooses the count
// and, by name, a type; it never writes an expression.
type Devices struct {
	Class string
	// Type is spec.resources.gpuType, empty for any GPU of the pool.
	Type      string
	Count     int32
	Selectors []string
}

// maxDevicesPerClaim is the most devices one ResourceClaim can be
// allocated (resource.k8s.io/v1 AllocationResultsMaxSize); the API server
// refuses a request for more.
const maxDevicesPerClaim = resourcev1.AllocationResultsMaxSize

// resolveDevices decides how the servers' gpu GPUs are requested: nil
// for an extended resource (the Input's default) or for no GPU, else the
// DRA request. It checks input.gpu whatever the claim asks, so a bad Input
// is found by its first claim, and spec.resources.gpuType against the
// Input's types; placed says the claim is served on workload clusters,
// whose own Inputs judge its type.
func resolveDevices(r *v1alpha1.ResourcesSpec, gpu int32, placed bool, in *v1beta1.Input, errs *FieldErrors) *Devices {
	var dra *v1beta1.DRASettings
	if in.GPU != nil {
		dra = in.GPU.DRA
	}
	if dra != nil {
		checkDRAInput(in.GPU, errs)
	}
	var gpuType string
	if r != nil {
		gpuType = r.GPUType
	}
	if gpuType != "" {
		switch {
		case gpu == 0:
			errs.Add("spec.resources.gpuType", "asks for GPUs of type %q but spec.resources.gpu is 0; set spec.resources.gpu or remove gpuType", gpuType)
		case placed:
			// The workload cluster that serves the claim judges it.
		case dra == nil:
			errs.Add("spec.resources.gpuType", "this platform requests GPUs as the extended resource %s and names no GPU types; remove gpuType", in.GPUSettings().ResourceName)
		case len(dra.Types) == 0:
			errs.Add("spec.resources.gpuType", "this platform names no GPU types (input.gpu.dra.types): any GPU of DeviceClass %s serves; remove gpuType", dra.DeviceClassName)
		default:
			if _, ok := dra.Types[gpuType]; !ok {
				errs.Add("spec.resources.gpuType", "%q is not a GPU type of this platform; use one of %s (input.gpu.dra.types)", gpuType, strings.Join(GPUTypes(dra), ", "))
			}
		}
	}
	if dra == nil || gpu == 0 {
		return nil
	}
	if gpu > maxDevicesPerClaim {
		errs.Add("spec.resources.gpu", "%d GPUs per server is more than one ResourceClaim can be allocated (%d devices, resource.k8s.io/v1); request at most %d, or spread the model over several nodes (spec.nodes)", gpu, maxDevicesPerClaim, maxDevicesPerClaim)
	}
	d := &Devices{Class: dra.DeviceClassName, Type: gpuType, Count: gpu}
	d.Selectors = append(d.Selectors, dra.Selectors...)
	if t, ok := dra.Types[gpuType]; ok {
		d.Selectors = append(d.Selectors, t.Selectors...)
	}
	return d
}

// GPUTypes are the names of the Input's GPU types, sorted.
func GPUTypes(dra *v1beta1.DRASettings) []string {
	names := make([]string, 0, len(dra.Types))
	for n := range dra.Types {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// checkDRAInput checks input.gpu with dra: one way of asking for GPUs, a
// DeviceClass name, GPU type names a claim can write, and every selector
// a CEL expression. The API server compiles the expressions again, with
// the DRA environment (device.driver, device.attributes, device.capacity,
// the quantity and semver functions), when Crossplane applies the
// ResourceClaimTemplate: a selector that parses but uses an unknown field
// is refused there, on the composed resource (Synced=False).
func checkDRAInput(g *v1beta1.GPUSettings, errs *FieldErrors) {
	dra := g.DRA
	if g.ResourceName != "" {
		errs.Add("input.gpu.resourceName", "%q is set beside input.gpu.dra: GPUs are asked for either as an extended resource or through DRA; remove one", g.ResourceName)
	}
	if dra.DeviceClassName == "" {
		errs.Add("input.gpu.dra.deviceClassName", "is empty; name the DeviceClass of the cluster's GPU driver (kubectl get deviceclasses)")
	}
	for _, m := range validation.IsDNS1123Subdomain(dra.DeviceClassName) {
		if dra.DeviceClassName != "" {
			errs.Add("input.gpu.dra.deviceClassName", "%q is not a DeviceClass name: %s", dra.DeviceClassName, m)
		}
	}
	checkSelectors(dra.Selectors, "input.gpu.dra.selectors", errs)
	for _, name := range GPUTypes(dra) {
		field := "input.gpu.dra.types." + name
		for _, m := range validation.IsDNS1123Label(name) {
			errs.Add(field, "%q cannot be a GPU type a claim names (spec.resources.gpuType): %s", name, m)
		}
		t := dra.Types[name]
		if len(t.Selectors) == 0 {
			errs.Add(field+".selectors", "is empty; a GPU type is the selectors its devices satisfy")
		}
		checkSelectors(t.Selectors, field+".selectors", errs)
		if n := len(dra.Selectors) + len(t.Selectors); n > resourcev1.DeviceSelectorsMaxSize {
			errs.Add(field+".selectors", "%d selectors with input.gpu.dra.selectors is more than a device request takes (%d)", n, resourcev1.DeviceSelectorsMaxSize)
		}
	}
}

// celParser parses device selectors. It declares nothing: an expression
// is only parsed here, since the functions the DRA environment adds
// (quantity, semver) are the API server's to check.
var celParser = func() *cel.Env {
	env, err := cel.NewEnv()
	if err != nil {
		panic("the CEL environment: " + err.Error())
	}
	return env
}()

// checkSelectors says which of the expressions at field are not CEL.
func checkSelectors(exprs []string, field string, errs *FieldErrors) {
	for i, e := range exprs {
		at := field + "[" + strconv.Itoa(i) + "]"
		switch {
		case strings.TrimSpace(e) == "":
			errs.Add(at, "is empty; write a CEL expression over device.attributes or device.capacity, or remove it")
		case len(e) > resourcev1.CELSelectorExpressionMaxLength:
			errs.Add(at, "is %d bytes; the API server takes at most %d", len(e), resourcev1.CELSelectorExpressionMaxLength)
		default:
			if _, iss := celParser.Parse(e); iss.Err() != nil {
				// Its first line, without the caret drawing under it.
				msg, _, _ := strings.Cut(iss.Err().Error(), "\n")
				msg = strings.TrimPrefix(msg, "ERROR: <input>:")
				errs.Add(at, "is not a CEL expression: at %s", msg)
			}
		}
	}
}
