package fn

import (
	"context"
	"errors"
	"fmt"

	"github.com/crossplane/function-sdk-go/logging"
	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/crossplane/function-sdk-go/response"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	"github.com/inferno-ai/function-inferno/internal/observe"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"github.com/inferno-ai/function-inferno/internal/status"
	"github.com/inferno-ai/function-inferno/internal/structcodec"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/structpb"
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

	in, err := resolve.DecodeInput(req.GetInput())
	if err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	observedXR := req.GetObserved().GetComposite().GetResource()
	var c composition
	var warnings []string
	if isModelCache(observedXR) {
		c, warnings, err = renderModelCache(req, rsp, in)
	} else {
		c, warnings, err = renderInferenceService(req, rsp, in)
	}
	if err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	if err := c.writeTo(rsp); err != nil {
		fatal(rsp, err)
		return rsp, nil
	}
	for _, w := range append(warnings, c.Report.Warnings...) {
		response.Warning(rsp, errors.New(w)).TargetCompositeAndClaim()
	}
	// How soon Crossplane calls again: soon while its circuit breaker has
	// cut the composite's watch; while it works, only if the call read
	// something Crossplane does not watch.
	settled := rsp.GetDesired().GetComposite().GetReady() == fnv1.Ready_READY_TRUE && !c.Changing
	rsp.Meta.Ttl = durationpb.New(plan.PollAfter(in, plan.Poll{
		WatchCut:       observe.WatchCut(observedXR),
		Settled:        settled,
		ReadsUnwatched: c.ReadsCache && !in.RequiredResourcesWatched(),
	}))
	log.Debug("Rendered", "xr", observedXR.GetFields()["metadata"].GetStructValue().GetFields()["name"].GetStringValue(), "resources", len(c.Resources))
	return rsp, nil
}

// renderInferenceService composes an InferenceService, in one direction:
// decode the XR, resolve it against the Input (pure: spec and Input
// only), observe the ModelCache and the Secrets it names and the objects
// Crossplane observed, plan, build the objects and the status (compose). A
// service on a ModelCache, or with credentials, asks Crossplane for them
// in rsp's requirements.
func renderInferenceService(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, in *v1beta1.Input) (composition, []string, error) {
	xr, err := resolve.DecodeXR(req.GetObserved().GetComposite().GetResource())
	if err != nil {
		return composition{}, nil, err
	}
	s, warnings, err := resolve.Resolve(xr, in)
	if err != nil {
		return composition{}, nil, err
	}
	if s.Placement != nil {
		// Served elsewhere: the workload clusters read the claim's
		// ModelCache and Secrets on their own side.
		c, err := composePlacement(s, req.GetObserved().GetResources())
		return c, warnings, err
	}
	// The requirements go out on every call, before any refusal, so that
	// Crossplane sees them stable and stops iterating.
	readsCache := requireCache(rsp, s)
	requireSecrets(rsp, s)
	names := observe.ClaimedServices(s, xr.Spec, req.GetObserved().GetResources())
	requireServices(rsp, s, names)
	cache, err := observe.Cache(req, s, in)
	if err != nil {
		return composition{}, nil, err
	}
	secrets, err := observe.ReadSecrets(req, s)
	if err != nil {
		return composition{}, nil, err
	}
	if err := observe.CheckNameClashes(req, s, names); err != nil {
		return composition{}, warnings, err
	}
	if err := observe.CheckCredentialSecrets(s, xr.Spec, secrets); err != nil {
		return composition{}, warnings, err
	}
	c, err := compose(s, cache, secrets, req.GetObserved().GetResources())
	c.ReadsCache = readsCache
	return c, warnings, err
}

// renderModelCache decodes, checks and composes a ModelCache, asking
// Crossplane for its Secret in rsp's requirements.
func renderModelCache(req *fnv1.RunFunctionRequest, rsp *fnv1.RunFunctionResponse, in *v1beta1.Input) (composition, []string, error) {
	xr, err := resolve.DecodeComposite[v1alpha1.XModelCache](req.GetObserved().GetComposite().GetResource())
	if err != nil {
		return composition{}, nil, err
	}
	s, warnings, err := resolve.ResolveCache(xr, in)
	if err != nil {
		return composition{}, nil, err
	}
	requireSecrets(rsp, s)
	secrets, err := observe.ReadSecrets(req, s)
	if err != nil {
		return composition{}, nil, err
	}
	if err := observe.CheckCacheCredentialSecret(s, xr.Spec, secrets); err != nil {
		return composition{}, warnings, err
	}
	c, err := composeCache(s, secrets, req.GetObserved().GetResources())
	return c, warnings, err
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

// composition is everything one call decides: the desired objects, in a
// fixed order, and the report on the composite.
type composition struct {
	Resources []render.Resource
	Report    status.Report
	// CacheStatus, for a ModelCache, replaces Report.Status.
	CacheStatus *v1alpha1.ModelCacheStatus
	// NotReady holds the composite not ready whatever its composed
	// resources say: Crossplane calls a composite of no composed resources
	// ready, and a service waiting for its ModelCache may have none.
	NotReady bool
	// Changing says a change is under way though every object may be
	// ready (plan.Plan.Changing): the composite is not settled.
	Changing bool
	// ReadsCache says the call required the ModelCache the service serves
	// from: a Crossplane that does not watch required resources
	// (input.poll.requiredResourcesWatched) would not report a new
	// revision or its readiness, so the function polls for them. Its other
	// requirements change nothing by themselves: a missing Secret is a
	// refusal, which polls at Crossplane's default TTL until it is fixed;
	// a Service of the claim's name is looked for again on the next
	// reconcile, before the function composes it.
	ReadsCache bool
}

// compose decides what to return for a resolved InferenceService given
// the observed ModelCache (nil without one), the required Secrets and the
// observed composed resources: it observes them, plans (plan.New), and builds the plan's
// objects and its status. It is pure: the same arguments give the same
// composition.
func compose(s *resolve.Spec, cache *observe.CachedWeights, secrets observe.Secrets, ocds map[string]*fnv1.Resource) (composition, error) {
	o, err := observe.Decode(ocds)
	if err != nil {
		return composition{}, err
	}
	o.Secrets = secrets
	p, err := plan.New(s, cache, o)
	if err != nil {
		return composition{}, err
	}
	resources, warnings := p.Resources()
	r := status.Of(p)
	r.Warnings = append(warnings, r.Warnings...)
	return composition{Resources: resources, Report: r, NotReady: p.WaitingForCache(), Changing: p.Changing()}, nil
}

// composePlacement decides what to return for a claim served on workload
// clusters (spec.placement): an Object per cluster that serves it or is
// leaving (plan.Place), and the claim's status from what each cluster
// reports. It is pure, as compose is.
func composePlacement(s *resolve.Spec, ocds map[string]*fnv1.Resource) (composition, error) {
	remotes, err := observe.Placed(ocds, s)
	if err != nil {
		return composition{}, err
	}
	p := plan.Place(s, remotes)
	resources, err := p.Resources()
	if err != nil {
		return composition{}, err
	}
	return composition{Resources: resources, Report: status.OfPlacement(p), NotReady: len(resources) == 0, Changing: p.Changing()}, nil
}

// writeTo puts the composition into the response: the composed objects,
// with their readiness, beside any that earlier pipeline steps desired, and
// the XR's status and conditions.
func (c composition) writeTo(rsp *fnv1.RunFunctionResponse) error {
	if rsp.Desired == nil {
		rsp.Desired = &fnv1.State{}
	}
	if rsp.Desired.Resources == nil {
		rsp.Desired.Resources = make(map[string]*fnv1.Resource, len(c.Resources))
	}
	// One encoder for the whole response, so that its objects share slabs.
	// Desired objects leave out `status: {}` and `creationTimestamp: null`,
	// which server-side apply would not apply (structcodec.Encoder.Struct
	// says why).
	enc := &structcodec.Encoder{Desired: true}
	for _, r := range c.Resources {
		obj, err := enc.Struct(r.Object)
		if err != nil {
			return fmt.Errorf("cannot encode %s: %w", r.Name, err)
		}
		ready := fnv1.Ready_READY_FALSE
		if r.Ready {
			ready = fnv1.Ready_READY_TRUE
		}
		rsp.Desired.Resources[r.Name] = &fnv1.Resource{Resource: obj, Ready: ready}
	}

	var st any = &c.Report.Status
	if c.CacheStatus != nil {
		st = c.CacheStatus
	}
	enc.Desired = false
	status, err := enc.Struct(st)
	if err != nil {
		return fmt.Errorf("cannot encode the status: %w", err)
	}
	if rsp.Desired.Composite == nil {
		rsp.Desired.Composite = &fnv1.Resource{}
	}
	xr := rsp.Desired.Composite.Resource
	if xr == nil {
		xr = &structpb.Struct{}
		rsp.Desired.Composite.Resource = xr
	}
	if xr.Fields == nil {
		xr.Fields = map[string]*structpb.Value{}
	}
	// Keep status fields that earlier pipeline steps set; ours replace
	// only their own.
	if prev := xr.Fields["status"].GetStructValue(); prev != nil {
		for k, v := range prev.GetFields() {
			if _, ours := status.Fields[k]; !ours {
				status.Fields[k] = v
			}
		}
	}
	xr.Fields["status"] = structpb.NewStructValue(status)
	rsp.Desired.Composite.Ready = compositeReady(rsp, c.NotReady)

	for _, cd := range c.Report.Conditions {
		var co *response.ConditionOption
		if cd.Status {
			co = response.ConditionTrue(rsp, cd.Type, cd.Reason.String())
		} else {
			co = response.ConditionFalse(rsp, cd.Type, cd.Reason.String())
		}
		co.WithMessage(cd.Message).TargetCompositeAndClaim()
	}
	return nil
}

// compositeReady says the composite's readiness outright: ready when
// every desired resource is (ours, and earlier steps' as they declared
// them; unspecified counts as not ready, as Crossplane counts it), nothing
// is waited for, and no earlier step said otherwise. Crossplane would
// derive the same verdict, but its Ready condition would then list the
// unready resources by name ("Unready resources: deployment-2, …"), a
// message that changes each time one more of them is ready: one more write
// of the composite, and two more watch events against its circuit breaker,
// per change (docs/performance.md, "What opens Crossplane's circuit
// breaker"). Said outright, Ready changes only between Creating and
// Available; WeightsReady and ServerReady say why in words.
func compositeReady(rsp *fnv1.RunFunctionResponse, waiting bool) fnv1.Ready {
	if waiting || rsp.GetDesired().GetComposite().GetReady() == fnv1.Ready_READY_FALSE {
		return fnv1.Ready_READY_FALSE
	}
	for _, r := range rsp.GetDesired().GetResources() {
		if r.GetReady() != fnv1.Ready_READY_TRUE {
			return fnv1.Ready_READY_FALSE
		}
	}
	return fnv1.Ready_READY_TRUE
}
