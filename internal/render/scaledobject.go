package render

import (
	"fmt"
	"strconv"

	"github.com/inferno-ai/function-inferno/internal/kinds/keda"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
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
// before break (plan.New) moves servers between versions by counting each
// version's ready servers, and a version at zero has none to count.
//
// The types are ours, the few fields we write and read, checked against
// the CRD of github.com/kedacore/keda/v2 v2.21.1
// (config/crd/bases/keda.sh_scaledobjects.yaml, which the e2e installs):
// importing that module would need Go 1.27.4 and KEDA's whole dependency
// tree for six structs.

// ResourceScaledObject is the composition resource name of the
// ScaledObject.
const ResourceScaledObject = "scaledobject"

// PodNameSuffix matches what a Deployment appends to its name in its pods'
// names: "-<pod-template-hash>-<5 random>", or, for names long enough that
// the generated name is cut at 58 characters, the hash shortened and the
// second dash gone. Neither part has a dash, so the pods of a claim whose
// name starts with this claim's name and a dash (llama and llama-small)
// never match: theirs have at least two more dashes.
const PodNameSuffix = `-[a-z0-9]{1,10}-?[a-z0-9]{5}`

// concurrencyQuery is the PromQL of the ScaledObject's trigger: the
// runtime's in-flight requests summed over this claim's servers. It is
// built from validated values only: the namespace (a DNS label), the
// server Deployment's name (a DNS-1035 label) and the metric name the
// Input gives (promMetricName), so a claim cannot write PromQL.
func concurrencyQuery(s *resolve.Spec, v *resolve.Version) string {
	return fmt.Sprintf(`sum(%s{namespace="%s",pod=~"%s%s"})`, s.Autoscaling.Metric, s.Namespace, v.ServerName(s), PodNameSuffix)
}

// ScaledObject builds the ScaledObject that scales the version's
// Deployment between 0 and maxReplicas:
//   - minReplicaCount 0 and idleReplicaCount 0: KEDA scales to zero when
//     every trigger is inactive (KEDA refuses an idle count not below the
//     HPA's floor, which is 1 when minReplicaCount is 0, so 0 is valid);
//   - a prometheus trigger on concurrencyQuery, AverageValue
//     targetConcurrency per server (active above 0), unless the runtime
//     has no such metric and the HTTP add-on's interceptor counts the
//     requests alone (its external-push trigger), and a cpu trigger
//     when the claim also sets targetCPUUtilization (a cpu trigger alone
//     could never wake it);
//   - cooldownPeriod, pollingInterval and fallback from the Input; the
//     fallback's servers capped at maxReplicas.
func ScaledObject(s *resolve.Spec, v *resolve.Version, maxReplicas int32) *keda.ScaledObject {
	a, z := s.Autoscaling, s.Autoscaling.ScaleToZero
	var triggers []keda.ScaleTrigger
	if a.Metric != "" {
		triggers = append(triggers, keda.ScaleTrigger{
			Type: "prometheus", Name: "concurrency", MetricType: "AverageValue",
			Metadata: map[string]string{
				"serverAddress": z.Prometheus,
				"query":         concurrencyQuery(s, v),
				"threshold":     strconv.Itoa(int(*a.Concurrency)),
			},
		})
	}
	if z.HTTPScaler != "" {
		// As the add-on's own ScaledObjects do (pkg/k8s/scaledobject.go).
		triggers = append(triggers, keda.ScaleTrigger{
			Type: "external-push", Name: "http", MetricType: "AverageValue",
			Metadata: map[string]string{"scalerAddress": z.HTTPScaler, "httpScaledObject": v.ServerName(s)},
		})
	}
	if a.CPUUtilization != nil {
		triggers = append(triggers, keda.ScaleTrigger{
			Type: "cpu", Name: "cpu", MetricType: "Utilization",
			Metadata: map[string]string{"value": strconv.Itoa(int(*a.CPUUtilization))},
		})
	}
	return &keda.ScaledObject{
		TypeMeta:   metav1.TypeMeta{APIVersion: keda.APIVersion, Kind: keda.Kind},
		ObjectMeta: metav1.ObjectMeta{Name: v.ServerName(s), Namespace: s.Namespace, Labels: s.Labels(v, v.Component())},
		Spec: keda.ScaledObjectSpec{
			ScaleTargetRef:   keda.ScaleTarget{APIVersion: "apps/v1", Kind: "Deployment", Name: v.ServerName(s)},
			PollingInterval:  ptr.To(z.Polling),
			CooldownPeriod:   ptr.To(z.Cooldown),
			IdleReplicaCount: ptr.To(int32(0)),
			MinReplicaCount:  ptr.To(int32(0)),
			MaxReplicaCount:  ptr.To(maxReplicas),
			Triggers:         triggers,
			Fallback:         &keda.Fallback{FailureThreshold: z.FallbackFailures, Replicas: min(z.FallbackReplicas, maxReplicas)},
		},
	}
}

// ScaledObjectReady reports whether the ScaledObject is ready:
//  1. it exists;
//  2. condition Ready=True: KEDA's operator accepted it and its scalers
//     answer (KEDA writes Ready=False when a trigger's query fails).
//
// Active (some trigger above its activation) says whether the servers are
// wanted, not whether the ScaledObject works: at zero it is False, and the
// service is Idle, ready.
func ScaledObjectReady(o *keda.ScaledObject) bool {
	c := o.Condition("Ready")
	return c != nil && c.Status == "True"
}

// ScaledObjectResource is the composition resource name of version v's
// ScaledObject: ResourceScaledObject for the primary, suffixed with the
// version for the others (see DeploymentResource).
func ScaledObjectResource(v *resolve.Version) string {
	if v.Primary {
		return ResourceScaledObject
	}
	return ResourceScaledObject + "-" + v.Model.Version
}
