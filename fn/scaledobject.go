package fn

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// Scale to zero. A claim with spec.autoscaling.enabled and
// spec.replicas.min 0, on a platform whose Input enables KEDA, gets a KEDA
// ScaledObject (keda.sh/v1alpha1) instead of the HorizontalPodAutoscaler:
// KEDA owns the Deployment's replicas, stops every server after
// input.keda.cooldownPeriod seconds without an in-flight request, and
// starts them again when the runtime's concurrency metric, summed over the
// claim's servers in the Prometheus the Input names, is above 0. Claims
// with a floor of 1 or more keep their HPA.
//
// What wakes a service at zero: its own servers' metric is empty with no
// server running, so something in front of them must hold or count the
// first request — KEDA's HTTP add-on (its interceptor queues requests and
// an HTTPScaledObject scales on them; rendered when input.keda.httpAddOn
// is enabled, see httpscaledobject.go) or a Gateway metric
// (docs/scale-to-zero.md).
//
// Scale to zero does not combine with spec.traffic (refused by name): make
// before break (newPlan) moves servers between versions by counting each
// version's ready servers, and a version at zero has none to count.
//
// The types are ours, the few fields we write and read, checked against
// the CRD of github.com/kedacore/keda/v2 v2.21.1
// (config/crd/bases/keda.sh_scaledobjects.yaml, which the e2e installs):
// importing that module would need Go 1.27.4 and KEDA's whole dependency
// tree for six structs.

// resourceScaledObject is the composition resource name of the
// ScaledObject.
const resourceScaledObject = "scaledobject"

const (
	kedaAPIVersion = "keda.sh/v1alpha1"
	kedaKind       = "ScaledObject"
)

// scaleToZero is input.keda, checked and defaulted.
type scaleToZero struct {
	Prometheus        string
	Cooldown, Polling int32
	// FallbackFailures and FallbackReplicas are the ScaledObject's
	// fallback: servers to run while the metric cannot be read.
	FallbackFailures, FallbackReplicas int32
	// HTTPScaler is the HTTP add-on's external scaler, host:port; empty
	// without the add-on.
	HTTPScaler string
}

var (
	// promMetricName is a Prometheus metric name.
	promMetricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)
	// hostPort is a DNS name and a port.
	hostPort = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?:[0-9]{1,5}$`)
)

// resolveScaleToZero checks a claim that scales to zero (autoscaling with
// spec.replicas.min 0) against the Input: KEDA enabled, no spec.traffic, a
// concurrency target on a runtime with a Prometheus metric name. nil when
// the platform does not offer it.
func resolveScaleToZero(spec v1alpha1.InferenceServiceSpec, rt v1beta1.RuntimePreset, fw v1alpha1.Framework, in *v1beta1.Input, errs *fieldErrors) *scaleToZero {
	k, ok := in.ScaleToZero()
	if !ok {
		errs.add("spec.replicas.min", "0 with spec.autoscaling.enabled scales the servers to zero, which this platform does not offer (input.keda.enabled is not true in the Composition's Input); use 1 or more, or ask your platform team to enable KEDA (input.keda)")
		return nil
	}
	if spec.Traffic != nil {
		errs.add("spec.replicas.min", "0 with spec.autoscaling.enabled (scale to zero) does not combine with spec.traffic: make before break moves servers between versions by counting each version's ready servers, and a version at zero has none; set min to 1 or more while the split lasts, or remove spec.traffic")
	}
	if spec.Autoscaling.TargetConcurrency == nil {
		errs.add("spec.autoscaling.targetConcurrency", "is required when spec.replicas.min is 0: with no server running there is no CPU to measure, and KEDA starts the servers from the runtime's in-flight requests; set it, e.g. 10")
	}
	if m := rt.ConcurrencyMetric; m != "" && !promMetricName.MatchString(m) {
		errs.add("input.runtimes."+string(fw)+".concurrencyMetric", "%q is not a Prometheus metric name, which KEDA's query needs to scale to zero; the Composition's Input must name the metric as Prometheus stores it ([a-zA-Z_:][a-zA-Z0-9_:]*)", m)
	}
	checkPrometheusAddress(k.PrometheusAddress, errs)
	z := &scaleToZero{
		Prometheus: k.PrometheusAddress, Cooldown: *k.CooldownPeriod, Polling: *k.PollingInterval,
		FallbackFailures: k.Fallback.FailureThreshold, FallbackReplicas: k.Fallback.Replicas,
	}
	if a := k.HTTPAddOn; a != nil {
		z.HTTPScaler = a.ScalerAddress
		if !hostPort.MatchString(a.ScalerAddress) || len(a.ScalerAddress) > 253 {
			errs.add("input.keda.httpAddOn.scalerAddress", "%q is not host:port; name the add-on's external scaler, e.g. %s", a.ScalerAddress, v1beta1.DefaultKEDAHTTPScalerAddress)
		}
	}
	if z.Cooldown < 30 || z.Cooldown > 86400 {
		errs.add("input.keda.cooldownPeriod", "%d is out of range; use 30 to 86400 seconds", z.Cooldown)
	}
	if z.Polling < 1 || z.Polling > 3600 {
		errs.add("input.keda.pollingInterval", "%d is out of range; use 1 to 3600 seconds", z.Polling)
	}
	if z.FallbackFailures < 1 || z.FallbackFailures > 100 {
		errs.add("input.keda.fallback.failureThreshold", "%d is out of range; use 1 to 100 failed queries", z.FallbackFailures)
	}
	if z.FallbackReplicas < 1 || z.FallbackReplicas > 1000 {
		errs.add("input.keda.fallback.replicas", "%d is out of range; use 1 to 1000 servers (0 would leave a service at zero while its metric cannot be read)", z.FallbackReplicas)
	}
	return z
}

// checkPrometheusAddress refuses an address KEDA's Prometheus scaler
// cannot use: an http(s) URL with a host, no credentials, nothing that
// could break out of the trigger's metadata.
func checkPrometheusAddress(addr string, errs *fieldErrors) {
	const field = "input.keda.prometheusAddress"
	if addr == "" {
		errs.add(field, "is required when input.keda.enabled is true; name the Prometheus KEDA queries, e.g. http://prometheus.monitoring.svc:9090")
		return
	}
	u, err := url.Parse(addr)
	switch {
	case err != nil || strings.ContainsAny(addr, " \t\r\n\"'`\\") || len(addr) > 512:
		errs.add(field, "%q is not a URL; write e.g. http://prometheus.monitoring.svc:9090", addr)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		errs.add(field, "%q must be an http:// or https:// URL with a host", addr)
	case u.User != nil:
		errs.add(field, "%q must not carry credentials; KEDA reads them from a TriggerAuthentication", addr)
	}
}

// scaledObject is a KEDA ScaledObject: the fields we write, and the status
// we read.
type scaledObject struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              scaledObjectSpec   `json:"spec"`
	Status            scaledObjectStatus `json:"status,omitempty"`
}

type scaledObjectSpec struct {
	ScaleTargetRef   scaleTarget    `json:"scaleTargetRef"`
	PollingInterval  *int32         `json:"pollingInterval,omitempty"`
	CooldownPeriod   *int32         `json:"cooldownPeriod,omitempty"`
	IdleReplicaCount *int32         `json:"idleReplicaCount,omitempty"`
	MinReplicaCount  *int32         `json:"minReplicaCount,omitempty"`
	MaxReplicaCount  *int32         `json:"maxReplicaCount,omitempty"`
	Triggers         []scaleTrigger `json:"triggers"`
	Fallback         *kedaFallback  `json:"fallback,omitempty"`
}

type scaleTarget struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name"`
}

type scaleTrigger struct {
	Type       string            `json:"type"`
	Name       string            `json:"name,omitempty"`
	Metadata   map[string]string `json:"metadata"`
	MetricType string            `json:"metricType,omitempty"`
}

type kedaFallback struct {
	FailureThreshold int32 `json:"failureThreshold"`
	Replicas         int32 `json:"replicas"`
}

type scaledObjectStatus struct {
	Conditions []kedaCondition `json:"conditions,omitempty"`
}

// kedaCondition is a condition as KEDA writes it (its own type, not
// metav1.Condition: no observedGeneration, all fields optional).
type kedaCondition struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// DeepCopyObject makes scaledObject a runtime.Object.
func (o *scaledObject) DeepCopyObject() runtime.Object {
	b, err := json.Marshal(o)
	if err != nil {
		panic(fmt.Sprintf("cannot copy a ScaledObject: %v", err))
	}
	out := &scaledObject{}
	if err := json.Unmarshal(b, out); err != nil {
		panic(fmt.Sprintf("cannot copy a ScaledObject: %v", err))
	}
	return out
}

// podNameSuffix matches what a Deployment appends to its name in its pods'
// names: "-<pod-template-hash>-<5 random>", or, for names long enough that
// the generated name is cut at 58 characters, the hash shortened and the
// second dash gone. Neither part has a dash, so the pods of a claim whose
// name starts with this claim's name and a dash (llama and llama-small)
// never match: theirs have at least two more dashes.
const podNameSuffix = `-[a-z0-9]{1,10}-?[a-z0-9]{5}`

// concurrencyQuery is the PromQL of the ScaledObject's trigger: the
// runtime's in-flight requests summed over this claim's servers. It is
// built from validated values only: the namespace (a DNS label), the
// server Deployment's name (a DNS-1035 label) and the metric name the
// Input gives (promMetricName), so a claim cannot write PromQL.
func concurrencyQuery(s *resolvedSpec, v *modelVersion) string {
	return fmt.Sprintf(`sum(%s{namespace="%s",pod=~"%s%s"})`, s.Autoscaling.Metric, s.Namespace, v.serverName(s), podNameSuffix)
}

// renderScaledObject builds the ScaledObject that scales the version's
// Deployment between 0 and maxReplicas:
//   - minReplicaCount 0 and idleReplicaCount 0: KEDA scales to zero when
//     every trigger is inactive (KEDA refuses an idle count not below the
//     HPA's floor, which is 1 when minReplicaCount is 0, so 0 is valid);
//   - a prometheus trigger on concurrencyQuery, AverageValue
//     targetConcurrency per server (active above 0), and a cpu trigger
//     when the claim also sets targetCPUUtilization (a cpu trigger alone
//     could never wake it);
//   - cooldownPeriod, pollingInterval and fallback from the Input; the
//     fallback's servers capped at maxReplicas.
func renderScaledObject(s *resolvedSpec, v *modelVersion, maxReplicas int32) *scaledObject {
	a, z := s.Autoscaling, s.Autoscaling.ScaleToZero
	triggers := []scaleTrigger{{
		Type: "prometheus", Name: "concurrency", MetricType: "AverageValue",
		Metadata: map[string]string{
			"serverAddress": z.Prometheus,
			"query":         concurrencyQuery(s, v),
			"threshold":     strconv.Itoa(int(*a.Concurrency)),
		},
	}}
	if z.HTTPScaler != "" {
		// As the add-on's own ScaledObjects do (pkg/k8s/scaledobject.go).
		triggers = append(triggers, scaleTrigger{
			Type: "external-push", Name: "http", MetricType: "AverageValue",
			Metadata: map[string]string{"scalerAddress": z.HTTPScaler, "httpScaledObject": v.serverName(s)},
		})
	}
	if a.CPUUtilization != nil {
		triggers = append(triggers, scaleTrigger{
			Type: "cpu", Name: "cpu", MetricType: "Utilization",
			Metadata: map[string]string{"value": strconv.Itoa(int(*a.CPUUtilization))},
		})
	}
	return &scaledObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: kedaAPIVersion, Kind: kedaKind},
		ObjectMeta: metav1.ObjectMeta{Name: v.serverName(s), Namespace: s.Namespace, Labels: s.labels(v, v.component())},
		Spec: scaledObjectSpec{
			ScaleTargetRef:   scaleTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: v.serverName(s)},
			PollingInterval:  ptrTo(z.Polling),
			CooldownPeriod:   ptrTo(z.Cooldown),
			IdleReplicaCount: ptrTo(int32(0)),
			MinReplicaCount:  ptrTo(int32(0)),
			MaxReplicaCount:  ptrTo(maxReplicas),
			Triggers:         triggers,
			Fallback:         &kedaFallback{FailureThreshold: z.FallbackFailures, Replicas: min(z.FallbackReplicas, maxReplicas)},
		},
	}
}

// scaledObjectReady reports whether the ScaledObject is ready:
//  1. it exists;
//  2. condition Ready=True: KEDA's operator accepted it and its scalers
//     answer (KEDA writes Ready=False when a trigger's query fails).
//
// Active (some trigger above its activation) says whether the servers are
// wanted, not whether the ScaledObject works: at zero it is False, and the
// service is Idle, ready.
func scaledObjectReady(o *scaledObject) bool {
	c := o.condition("Ready")
	return c != nil && c.Status == "True"
}

// active reports KEDA's Active=True: a trigger wants servers.
func (o *scaledObject) active() bool {
	c := o.condition("Active")
	return c != nil && c.Status == "True"
}

// condition is the ScaledObject's condition of that type, nil when there
// is none (or no ScaledObject).
func (o *scaledObject) condition(t string) *kedaCondition {
	if o == nil {
		return nil
	}
	for i := range o.Status.Conditions {
		if o.Status.Conditions[i].Type == t {
			return &o.Status.Conditions[i]
		}
	}
	return nil
}

// scalesToZero reports whether the version's servers are scaled by a
// ScaledObject.
func (v *modelVersion) scalesToZero(s *resolvedSpec) bool {
	return v.autoscaled(s) && s.Autoscaling.ScaleToZero != nil
}

func (v *modelVersion) scaledObjectResource() string {
	if v.Primary {
		return resourceScaledObject
	}
	return resourceScaledObject + "-" + v.Model.Version
}
