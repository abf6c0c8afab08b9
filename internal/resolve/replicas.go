package resolve

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"
)

// ReplicaBounds are spec.replicas and spec.autoscaling, checked.
type ReplicaBounds struct {
	MinReplicas int32
	MaxReplicas int32
	Autoscaling *Autoscaling // nil without an HPA
}

// serverSettings are what each model server requests and where it runs.
type serverSettings struct {
	CPU         resource.Quantity
	Memory      resource.Quantity
	GPU         int32
	GPUSettings v1beta1.GPUSettings
	// Devices, with input.gpu.dra, requests the GPUs through Dynamic
	// Resource Allocation (gpu.go); nil for an extended resource or no GPU.
	Devices *Devices
	// Scheduling is the Input's node pool: every pod carries it.
	Scheduling v1beta1.Scheduling
	// ServiceAccount runs the servers, empty for the namespace's default;
	// ServerToken mounts its API token into them. Pull pods never get one.
	ServiceAccount string
	ServerToken    bool
}

// pullSettings are the Input's bounds of a pull Job.
type pullSettings struct {
	Backoff int32
	// PullDeadline bounds a pull Job in seconds (activeDeadlineSeconds);
	// PullStall is how long its download may make no progress.
	PullDeadline int64
	PullStall    int32
}

// rollout is the servers' RollingUpdate bounds.
type rollout struct {
	MaxSurge, MaxUnavailable intstr.IntOrString
}

// Autoscaling is spec.autoscaling, checked, for a claim that enables it:
// the targets (CPU utilisation, and in-flight requests per server on the
// runtime's concurrency metric, which the Input names), which the HPA or,
// with spec.replicas.min 0, KEDA's ScaledObject scales on. A claim that
// sets no target and does not scale to zero gets defaultCPUUtilization.
type Autoscaling struct {
	CPUUtilization *int32
	Concurrency    *int32
	Metric         string // the runtime's concurrency metric
	// ScaleToZero, with spec.replicas.min 0, scales the servers with a
	// KEDA ScaledObject instead of an HPA; nil otherwise.
	ScaleToZero *scaleToZero
}

// CountedByInterceptor says the in-flight requests are counted by KEDA's
// HTTP add-on, whose interceptor every request passes through: a service
// that scales to zero through it needs no metric of the runtime's own
// (Ollama has none).
func (a *Autoscaling) CountedByInterceptor() bool {
	return a.ScaleToZero != nil && a.ScaleToZero.HTTPScaler != ""
}

// InFlight names what the in-flight requests are read from, for messages:
// the runtime's concurrency metric, or the add-on's interceptor when the
// runtime has none.
func (a *Autoscaling) InFlight() string {
	if a.Metric == "" {
		return "the HTTP add-on interceptor's in-flight requests"
	}
	return a.Metric
}

type storage struct {
	Size       resource.Quantity
	Class      string
	AccessMode corev1.PersistentVolumeAccessMode
}

// resolvePulls applies and checks the Input's settings of pull Jobs.
func resolvePulls(in *v1beta1.Input, errs *FieldErrors) pullSettings {
	p := pullSettings{Backoff: in.BackoffLimit(), PullDeadline: in.PullDeadline(), PullStall: in.PullStall()}
	if p.Backoff < 0 || p.Backoff > 20 {
		errs.Add("input.pullBackoffLimit", "%d is out of range; use 0 to 20", p.Backoff)
	}
	if p.PullDeadline < 60 || p.PullDeadline > 7*24*3600 {
		errs.Add("input.pullDeadlineSeconds", "%d is out of range; use 60 to 604800 seconds (a week), generously: it stops the pull, retries included", p.PullDeadline)
	}
	if p.PullStall < 30 || p.PullStall > 3600 {
		errs.Add("input.pullStallSeconds", "%d is out of range; use 30 to 3600 seconds", p.PullStall)
	}
	return p
}

// resolveRollout checks input.rollout: each bound a count of 0 or more
// or a percentage, and not both 0.
func resolveRollout(in *v1beta1.Input, errs *FieldErrors) rollout {
	surge, unavailable := in.RollingUpdate()
	// As the Deployment API: a surge may exceed the desired count, an
	// outage may not.
	noSurge := rolloutBoundZero("input.rollout.maxSurge", surge, 1000, errs)
	noOutage := rolloutBoundZero("input.rollout.maxUnavailable", unavailable, 100, errs)
	if noSurge && noOutage {
		errs.Add("input.rollout", "maxSurge and maxUnavailable are both 0, so a rollout could never replace a server; allow a surge (it needs a spare GPU or node per extra server) or, with no spare capacity, maxUnavailable (a rollout then drops capacity)")
	}
	return rollout{MaxSurge: surge, MaxUnavailable: unavailable}
}

// rolloutBoundZero checks one bound of input.rollout, a number of servers
// or a percentage of at most most, and reports whether it is 0.
func rolloutBoundZero(field string, v intstr.IntOrString, most int, errs *FieldErrors) bool {
	if v.Type == intstr.Int {
		if v.IntVal < 0 {
			errs.Add(field, "%d is negative; use a number of servers of 0 or more, or a percentage such as \"25%%\"", v.IntVal)
		}
		return BoundIsZero(v)
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	if !strings.HasSuffix(v.StrVal, "%") || err != nil || n < 0 || n > most {
		errs.Add(field, "%q is neither a number of servers nor a percentage from 0%% to %d%%; write e.g. 1 or \"25%%\"", v.StrVal, most)
		return false
	}
	return BoundIsZero(v)
}

// BoundIsZero reports whether a rollout bound allows nothing: 0, or 0%.
func BoundIsZero(v intstr.IntOrString) bool {
	if v.Type == intstr.Int {
		return v.IntVal == 0
	}
	n, err := strconv.Atoi(strings.TrimSuffix(v.StrVal, "%"))
	return strings.HasSuffix(v.StrVal, "%") && err == nil && n == 0
}

// resolveReplicas checks spec.replicas and spec.autoscaling; rt is the
// runtime, whose concurrency metric targetConcurrency scales on.
func resolveReplicas(spec v1alpha1.InferenceServiceSpec, rt v1beta1.RuntimePreset, fw v1alpha1.Framework, in *v1beta1.Input, errs *FieldErrors, warnings *[]string) ReplicaBounds {
	s := ReplicaBounds{MinReplicas: 1}
	if r := spec.Replicas; r != nil {
		if r.Min != nil {
			s.MinReplicas = *r.Min
		}
		if r.Max != nil {
			s.MaxReplicas = *r.Max
		}
	}
	if s.MinReplicas < 0 {
		errs.Add("spec.replicas.min", "%d is negative; use 0 or more", s.MinReplicas)
	}
	if spec.Replicas == nil || spec.Replicas.Max == nil {
		s.MaxReplicas = max(s.MinReplicas, 1)
	} else if s.MaxReplicas < 1 {
		errs.Add("spec.replicas.max", "%d is less than 1; use 1 or more, or leave it out to default to min", s.MaxReplicas)
	}
	if s.MaxReplicas < s.MinReplicas && s.MaxReplicas > 0 {
		errs.Add("spec.replicas", "min (%d) exceeds max (%d); raise max or lower min", s.MinReplicas, s.MaxReplicas)
	}
	if s.MinReplicas > 1000 || s.MaxReplicas > 1000 {
		errs.Add("spec.replicas", "at most 1000 servers are allowed")
	}

	a := spec.Autoscaling
	if a == nil || !a.Enabled {
		if a != nil && (a.TargetCPUUtilization != nil || a.TargetConcurrency != nil) {
			*warnings = append(*warnings, "spec.autoscaling: targets have no effect while spec.autoscaling.enabled is false")
		}
		if spec.Replicas != nil && spec.Replicas.Max != nil && s.MaxReplicas != s.MinReplicas {
			*warnings = append(*warnings, fmt.Sprintf("spec.replicas.max (%d) has no effect while spec.autoscaling.enabled is false; %d servers run", s.MaxReplicas, s.MinReplicas))
		}
		return s
	}
	as := &Autoscaling{CPUUtilization: a.TargetCPUUtilization, Concurrency: a.TargetConcurrency}
	if s.MinReplicas == 0 {
		as.ScaleToZero = resolveScaleToZero(spec, rt, fw, in, errs)
	}
	if t := a.TargetCPUUtilization; t != nil && (*t < 1 || *t > 100) {
		errs.Add("spec.autoscaling.targetCPUUtilization", "%d is out of range; use a percentage from 1 to 100", *t)
	}
	if t := a.TargetConcurrency; t != nil {
		switch {
		case *t < 1:
			errs.Add("spec.autoscaling.targetConcurrency", "%d must be at least 1", *t)
		case rt.ConcurrencyMetric == "" && fw != "" && !as.CountedByInterceptor():
			errs.Add("spec.autoscaling.targetConcurrency", "the %s runtime exposes no concurrency metric in the platform's Input; use targetCPUUtilization, scale to zero (spec.replicas.min 0) where the platform runs KEDA's HTTP add-on (input.keda.httpAddOn), whose interceptor counts the requests itself, or ask your platform team to set input.runtimes.%s.concurrencyMetric", fw, fw)
		}
		as.Metric = rt.ConcurrencyMetric
	}
	if as.CPUUtilization == nil && as.Concurrency == nil && as.ScaleToZero == nil {
		as.CPUUtilization = ptr.To(defaultCPUUtilization)
	}
	if s.MaxReplicas == s.MinReplicas && s.MinReplicas > 0 {
		*warnings = append(*warnings, fmt.Sprintf("spec.replicas.max: the autoscaler cannot scale beyond %d servers while max equals min; raise spec.replicas.max", s.MinReplicas))
	}
	s.Autoscaling = as
	return s
}

// defaultCPUUtilization is the autoscaler's target when a claim enables
// autoscaling without naming a target.
const defaultCPUUtilization = int32(80)

// resolveResources applies the Input's defaults to spec.resources and says
// where the servers run.
func resolveResources(r *v1alpha1.ResourcesSpec, fw v1alpha1.Framework, in *v1beta1.Input, errs *FieldErrors, warnings *[]string) serverSettings {
	var s serverSettings
	d := in.ResourceDefaults()
	s.CPU, s.Memory = *d.CPU, *d.Memory
	if r != nil {
		if r.CPU != nil {
			s.CPU = *r.CPU
			if s.CPU.Sign() <= 0 {
				errs.Add("spec.resources.cpu", "%s must be more than zero", r.CPU.String())
			}
		}
		if r.Memory != nil {
			s.Memory = *r.Memory
			if s.Memory.Sign() <= 0 {
				errs.Add("spec.resources.memory", "%s must be more than zero", r.Memory.String())
			}
		}
		if r.GPU != nil {
			s.GPU = *r.GPU
			if s.GPU < 0 || s.GPU > 64 {
				errs.Add("spec.resources.gpu", "%d is out of range; use 0 to 64 GPUs per server", s.GPU)
			}
		}
	}
	s.GPUSettings = in.GPUSettings()
	if in.Scheduling != nil {
		s.Scheduling = *in.Scheduling
	}
	if sa := in.ServerServiceAccount; sa != nil {
		s.ServiceAccount = sa.Name
		s.ServerToken = sa.AutomountToken != nil && *sa.AutomountToken
		for _, m := range validation.IsDNS1123Subdomain(sa.Name) {
			errs.Add("input.serverServiceAccount.name", "%q is not a ServiceAccount name: %s", sa.Name, m)
		}
	}
	if s.GPU == 0 && (fw == v1alpha1.FrameworkVLLM || fw == v1alpha1.FrameworkSGLang || fw == v1alpha1.FrameworkTGI || fw == v1alpha1.FrameworkTriton) {
		*warnings = append(*warnings, fmt.Sprintf("spec.resources.gpu: no GPU requested; %s will run on CPU, slowly if at all", fw))
	}
	return s
}

// resolveStorage applies the Input's defaults to the cache volume of the
// versions, and warns when its access mode cannot serve their servers.
// adapters says spec.adapters are pulled into the volume whatever the base
// model's source.
func resolveStorage(st *v1alpha1.StorageSpec, in *v1beta1.Input, versions []Version, bounds ReplicaBounds, split, adapters bool, errs *FieldErrors, warnings *[]string) storage {
	d := in.StorageDefaults()
	out := storage{Class: d.StorageClassName, AccessMode: corev1.PersistentVolumeAccessMode(d.AccessMode)}
	if d.Size != nil {
		out.Size = *d.Size
	}
	if st != nil {
		if st.Size != nil {
			out.Size = *st.Size
			if out.Size.Sign() <= 0 {
				errs.Add("spec.storage.size", "%s must be more than zero", st.Size.String())
			}
		}
		if st.StorageClassName != nil {
			out.Class = *st.StorageClassName
			for _, m := range validation.IsDNS1123Subdomain(out.Class) {
				errs.Add("spec.storage.storageClassName", "%q is not a StorageClass name: %s", out.Class, m)
			}
		}
		if st.AccessMode != "" {
			out.AccessMode = corev1.PersistentVolumeAccessMode(st.AccessMode)
		}
	}
	switch out.AccessMode {
	case corev1.ReadWriteOnce, corev1.ReadWriteMany:
	default:
		field := "input.storage.accessMode"
		if st != nil && st.AccessMode != "" {
			field = "spec.storage.accessMode"
		}
		errs.Add(field, "%q is not supported; use ReadWriteOnce or ReadWriteMany (the pull Job writes the volume while the servers read it)", out.AccessMode)
	}
	if !pulledAny(versions) && !adapters {
		if st != nil && len(versions) > 0 && versions[0].Model.Cache == "" && (st.Size != nil || st.StorageClassName != nil || st.AccessMode != "") {
			*warnings = append(*warnings, "spec.storage has no effect: pvc:// and oci:// models are mounted from the claim or image they name, and no cache volume is made")
		}
		return out
	}
	servers := bounds.MaxReplicas
	if split {
		// Every version's servers mount the one volume.
		servers = 0
		for i := range versions {
			servers += versions[i].MaxReplicas
		}
	}
	if out.AccessMode != corev1.ReadWriteMany && servers > 1 {
		*warnings = append(*warnings, fmt.Sprintf("spec.storage.accessMode: %s volumes attach to one node, so of up to %d servers only those on that node can start; use ReadWriteMany for more than one replica across nodes", out.AccessMode, servers))
	}
	return out
}
