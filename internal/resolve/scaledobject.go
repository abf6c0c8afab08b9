package resolve

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
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
	// HTTPResponseTimeout is how long, in seconds, the add-on's
	// interceptor waits for a server's response headers; 0 without the
	// add-on.
	HTTPResponseTimeout int32
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
func resolveScaleToZero(spec v1alpha1.InferenceServiceSpec, rt v1beta1.RuntimePreset, fw v1alpha1.Framework, in *v1beta1.Input, errs *FieldErrors) *scaleToZero {
	k, ok := in.ScaleToZero()
	if !ok {
		errs.Add("spec.replicas.min", "0 with spec.autoscaling.enabled scales the servers to zero, which this platform does not offer (input.keda.enabled is not true in the Composition's Input); use 1 or more, or ask your platform team to enable KEDA (input.keda)")
		return nil
	}
	if spec.Traffic != nil {
		errs.Add("spec.replicas.min", "0 with spec.autoscaling.enabled (scale to zero) does not combine with spec.traffic: make before break moves servers between versions by counting each version's ready servers, and a version at zero has none; set min to 1 or more while the split lasts, or remove spec.traffic")
	}
	if spec.Autoscaling.TargetConcurrency == nil {
		errs.Add("spec.autoscaling.targetConcurrency", "is required when spec.replicas.min is 0: with no server running there is no CPU to measure, and KEDA starts the servers from the runtime's in-flight requests; set it, e.g. 10")
	}
	if m := rt.ConcurrencyMetric; m != "" && !promMetricName.MatchString(m) {
		errs.Add("input.runtimes."+string(fw)+".concurrencyMetric", "%q is not a Prometheus metric name, which KEDA's query needs to scale to zero; the Composition's Input must name the metric as Prometheus stores it ([a-zA-Z_:][a-zA-Z0-9_:]*)", m)
	}
	checkPrometheusAddress(k.PrometheusAddress, errs)
	z := &scaleToZero{
		Prometheus: k.PrometheusAddress, Cooldown: *k.CooldownPeriod, Polling: *k.PollingInterval,
		FallbackFailures: k.Fallback.FailureThreshold, FallbackReplicas: k.Fallback.Replicas,
	}
	if a := k.HTTPAddOn; a != nil {
		z.HTTPScaler, z.HTTPResponseTimeout = a.ScalerAddress, *a.ResponseTimeoutSeconds
		if !hostPort.MatchString(a.ScalerAddress) || len(a.ScalerAddress) > 253 {
			errs.Add("input.keda.httpAddOn.scalerAddress", "%q is not host:port; name the add-on's external scaler, e.g. %s", a.ScalerAddress, v1beta1.DefaultKEDAHTTPScalerAddress)
		}
		if t := z.HTTPResponseTimeout; t < 1 || t > 86400 {
			errs.Add("input.keda.httpAddOn.responseTimeoutSeconds", "%d is out of range; use 1 to 86400 seconds (long enough for the longest answer that is not streamed)", t)
		}
	}
	if z.Cooldown < 30 || z.Cooldown > 86400 {
		errs.Add("input.keda.cooldownPeriod", "%d is out of range; use 30 to 86400 seconds", z.Cooldown)
	}
	if z.Polling < 1 || z.Polling > 3600 {
		errs.Add("input.keda.pollingInterval", "%d is out of range; use 1 to 3600 seconds", z.Polling)
	}
	if z.FallbackFailures < 1 || z.FallbackFailures > 100 {
		errs.Add("input.keda.fallback.failureThreshold", "%d is out of range; use 1 to 100 failed queries", z.FallbackFailures)
	}
	if z.FallbackReplicas < 1 || z.FallbackReplicas > 1000 {
		errs.Add("input.keda.fallback.replicas", "%d is out of range; use 1 to 1000 servers (0 would leave a service at zero while its metric cannot be read)", z.FallbackReplicas)
	}
	return z
}

// checkPrometheusAddress refuses an address KEDA's Prometheus scaler
// cannot use: an http(s) URL with a host, no credentials, nothing that
// could break out of the trigger's metadata.
func checkPrometheusAddress(addr string, errs *FieldErrors) {
	const field = "input.keda.prometheusAddress"
	if addr == "" {
		errs.Add(field, "is required when input.keda.enabled is true; name the Prometheus KEDA queries, e.g. http://prometheus.monitoring.svc:9090")
		return
	}
	u, err := url.Parse(addr)
	switch {
	case err != nil || strings.ContainsAny(addr, " \t\r\n\"'`\\") || len(addr) > 512:
		errs.Add(field, "%q is not a URL; write e.g. http://prometheus.monitoring.svc:9090", addr)
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		errs.Add(field, "%q must be an http:// or https:// URL with a host", addr)
	case u.User != nil:
		errs.Add(field, "%q must not carry credentials; KEDA reads them from a TriggerAuthentication", addr)
	}
}
