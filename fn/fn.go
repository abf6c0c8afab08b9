// Package fn is function-inferno's logic: it turns an InferenceService into
// a weights cache volume, a pull Job, and once the weights are there the
// model servers' Deployment, Service and autoscaler, and reports their
// readiness and the service's status.
package fn

import (
	"context"
	"errors"
	"fmt"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/request"
	"github.com/crossplane/function-sdk-go/resource"
	"github.com/crossplane/function-sdk-go/response"
	"k8s.io/apimachinery/pkg/runtime"
)

// Function renders InferenceServices. It holds no state between calls:
// everything it needs is in the request.
type Function struct {
	fnv1.UnimplementedFunctionRunnerServiceServer

	Log logging.Logger
}

// RunFunction renders one InferenceService. Problems with the claim are
// reported as results, never as gRPC errors, which are for the transport.
func (f *Function) RunFunction(_ context.Context, req *fnv1.RunFunctionRequest) (*fnv1.RunFunctionResponse, error) {
	rsp := response.To(req, response.DefaultTTL)
	log := f.logger()

	in, err := decodeInput(req.GetInput())
	if err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	oxr, err := request.GetObservedCompositeResource(req)
	if err != nil {
		fatal(rsp, fmt.Errorf("cannot read the observed composite resource: %w", err))
		return rsp, nil
	}
	log = log.WithValues("xr", oxr.Resource.GetName())

	xr, err := decodeXR(oxr.Resource.Object)
	if err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	s, warnings, err := resolve(xr, in)
	if err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	ocds, err := request.GetObservedComposedResources(req)
	if err != nil {
		fatal(rsp, fmt.Errorf("cannot read the observed composed resources: %w", err))
		return rsp, nil
	}

	c, err := compose(s, ocds)
	if err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	if err := c.writeTo(req, rsp); err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	for _, w := range append(warnings, c.Report.Warnings...) {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	log.Debug("Rendered", "phase", c.Report.Status.Phase, "resources", len(c.Resources))
	return rsp, nil
}

func (f *Function) logger() logging.Logger {
	if f.Log == nil {
		return logging.NewNopLogger()
	}
	return f.Log
}

// fatal reports a problem the claim's author must fix, on the composite and
// on the claim.
func fatal(rsp *fnv1.RunFunctionResponse, err error) {
	rsp.Results = append(rsp.Results, &fnv1.Result{
		Severity: fnv1.Severity_SEVERITY_FATAL,
		Message:  err.Error(),
		Target:   fnv1.Target_TARGET_COMPOSITE_AND_CLAIM.Enum(),
	})
}

// composedResource is one desired composed object and its readiness.
type composedResource struct {
	Name   string
	Object runtime.Object
	Ready  bool
}

// composition is everything one call decides: the desired objects, in a
// fixed order, and the report on the composite.
type composition struct {
	Resources []composedResource
	Report    report
}

// compose decides what to return for a resolved InferenceService given the
// observed composed resources. It is pure: the same arguments give the
// same composition.
//
// Only the first creation of the servers waits for the weights. Crossplane
// deletes whatever the function stops returning, so once the Deployment,
// Service or autoscaler exists it is returned on every later call.
func compose(s *service, ocds map[resource.Name]resource.ObservedComposed) (composition, error) {
	var c composition
	add := func(name string, obj runtime.Object, ready bool) {
		c.Resources = append(c.Resources, composedResource{Name: name, Object: obj, Ready: ready})
	}

	var job pullJob
	if s.Model.pulled() {
		job = renderPullJob(s)
	}
	o, err := observe(ocds, job.Resource)
	if err != nil {
		return c, err
	}

	p := progress{}
	var warnings []string
	if s.Model.pulled() {
		pvc, w := renderPVC(s, o.PVC)
		warnings = append(warnings, w...)
		add(resourcePVC, pvc, pvcBound(o.PVC))

		p.Pull, p.PullDetail = pullState(o.Job)
		p.JobName = job.Job.Name
		add(job.Resource, job.Job, p.Pull == jobComplete)
	}

	// Which weights the servers mount: the wanted ones once they are
	// there; until then, whatever an existing Deployment already serves.
	want := wantedWeights(s)
	switch {
	case !s.Model.pulled() || p.Pull == jobComplete:
		p.Serving = &want
	case o.Deployment != nil:
		if w, ok := servedWeights(o.Deployment); ok {
			p.Serving = &w
		} else {
			p.Serving = &want
		}
	}
	if p.Serving != nil {
		add(resourceDeployment, renderDeployment(s, *p.Serving), deploymentReady(o.Deployment))
	}
	if p.Serving != nil || o.Service != nil {
		add(resourceService, renderService(s), serviceReady(o.Service))
		p.ServiceRendered = true
	}
	if s.Autoscaling != nil && (p.Serving != nil || o.HPA != nil) {
		add(resourceHPA, renderHPA(s), hpaReady(o.HPA))
	}

	c.Report = statusFor(s, o, p)
	c.Report.Warnings = append(warnings, c.Report.Warnings...)
	return c, nil
}

// writeTo puts the composition into the response: the composed objects as
// unstructured content, with their readiness, and the XR's status and
// conditions.
func (c composition) writeTo(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse) error {
	desired, err := request.GetDesiredComposedResources(req)
	if err != nil {
		return fmt.Errorf("cannot read the desired composed resources: %w", err)
	}
	for _, r := range c.Resources {
		u, err := toComposed(r.Object)
		if err != nil {
			return fmt.Errorf("cannot convert %s to unstructured content: %w", r.Name, err)
		}
		ready := resource.ReadyFalse
		if r.Ready {
			ready = resource.ReadyTrue
		}
		desired[resource.Name(r.Name)] = &resource.DesiredComposed{Resource: u, Ready: ready}
	}
	if err := response.SetDesiredComposedResources(rsp, desired); err != nil {
		return fmt.Errorf("cannot set the desired composed resources: %w", err)
	}

	dxr, err := request.GetDesiredCompositeResource(req)
	if err != nil {
		return fmt.Errorf("cannot read the desired composite resource: %w", err)
	}
	status, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&c.Report.Status)
	if err != nil {
		return fmt.Errorf("cannot convert the status: %w", err)
	}
	for k, v := range status {
		if err := dxr.Resource.SetValue("status."+k, v); err != nil {
			return fmt.Errorf("cannot set status.%s: %w", k, err)
		}
	}
	if err := response.SetDesiredCompositeResource(rsp, dxr); err != nil {
		return fmt.Errorf("cannot set the desired composite resource: %w", err)
	}

	for _, cd := range c.Report.Conditions {
		var co *response.ConditionOption
		if cd.Status {
			co = response.ConditionTrue(rsp, cd.Type, cd.Reason)
		} else {
			co = response.ConditionFalse(rsp, cd.Type, cd.Reason)
		}
		co.WithMessage(cd.Message).TargetCompositeAndClaim()
	}
	return nil
}
