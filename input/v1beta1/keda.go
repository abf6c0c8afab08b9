package v1beta1

// KEDASettings let claims scale their servers to zero with KEDA
// (keda.sh/v1alpha1 ScaledObject). A claim asks for it with
// spec.autoscaling.enabled and spec.replicas.min 0; claims with a floor
// of 1 or more keep their HorizontalPodAutoscaler. The cluster must run
// KEDA and a Prometheus that scrapes the servers' metrics (with the
// namespace and pod labels a PodMonitor or the usual pod scrape config
// gives them).
type KEDASettings struct {
	// Enabled lets claims set spec.replicas.min to 0 with autoscaling: the
	// function then renders a ScaledObject instead of the autoscaler.
	// Defaults to false, and such claims are refused.
	Enabled bool `json:"enabled"`

	// PrometheusAddress is the Prometheus server KEDA queries for the
	// runtime's concurrency metric (input.runtimes.<framework>.concurrencyMetric),
	// e.g. http://prometheus.monitoring.svc:9090. Required when enabled.
	// +optional
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:Pattern=`^https?://[^\s"'\\]+$`
	PrometheusAddress string `json:"prometheusAddress,omitempty"`

	// CooldownPeriod is how many seconds KEDA waits after the last
	// in-flight request before it scales the servers to zero (the
	// ScaledObject's cooldownPeriod). Defaults to 300. A model loads for
	// minutes, so a short cooldown makes every burst pay a cold start.
	// +optional
	// +kubebuilder:validation:Minimum=30
	// +kubebuilder:validation:Maximum=86400
	CooldownPeriod *int32 `json:"cooldownPeriod,omitempty"`

	// PollingInterval is how often, in seconds, KEDA queries Prometheus
	// while the servers are at zero (the ScaledObject's pollingInterval):
	// the longest a first request waits before a server starts, beside
	// the server's own start-up. Defaults to 15.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3600
	PollingInterval *int32 `json:"pollingInterval,omitempty"`

	// Fallback is what KEDA does when it cannot read the metric (Prometheus
	// down, the query failing): after failureThreshold failed queries it
	// runs replicas servers, so an outage of the metrics pipeline does not
	// leave a service at zero. Defaults to failureThreshold 3, replicas 1.
	// +optional
	Fallback *KEDAFallback `json:"fallback,omitempty"`

	// HTTPAddOn wakes services from zero through KEDA's HTTP add-on
	// (checked against github.com/kedacore/http-add-on v0.12.0): each claim
	// that scales to zero also gets an HTTPScaledObject
	// (http.keda.sh/v1alpha1) for its Service, whose interceptor holds
	// requests while a server starts, and its ScaledObject an
	// external-push trigger on the add-on's scaler. Clients then call the
	// add-on's interceptor with the Service's DNS name as Host. Without
	// it, something else must wake a service at zero.
	// +optional
	HTTPAddOn *KEDAHTTPAddOn `json:"httpAddOn,omitempty"`
}

// KEDAHTTPAddOn names KEDA's HTTP add-on.
type KEDAHTTPAddOn struct {
	// Enabled renders the HTTPScaledObjects. Defaults to false.
	Enabled bool `json:"enabled"`

	// ScalerAddress is the add-on's external scaler, host:port, that
	// KEDA's external-push trigger connects to. Defaults to
	// keda-add-ons-http-external-scaler.keda:9090, the add-on chart's.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9.]*[a-z0-9])?:[0-9]{1,5}$`
	ScalerAddress string `json:"scalerAddress,omitempty"`

	// ResponseTimeoutSeconds is how long the add-on's interceptor waits
	// for a server's response headers once it forwarded a request (the
	// HTTPScaledObject's timeouts.responseHeader). A completion that is
	// not streamed sends its headers when it is done, so this bounds the
	// longest answer; the add-on's own default (500 ms) would cut almost
	// every one. Defaults to 600.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	ResponseTimeoutSeconds *int32 `json:"responseTimeoutSeconds,omitempty"`
}

// KEDAFallback is a ScaledObject's fallback.
type KEDAFallback struct {
	// FailureThreshold is how many consecutive failed metric queries
	// start the fallback.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	FailureThreshold int32 `json:"failureThreshold"`

	// Replicas is how many servers run while the fallback lasts, capped at
	// the claim's spec.replicas.max.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=1000
	Replicas int32 `json:"replicas"`
}

// Defaults of KEDASettings.
const (
	DefaultKEDACooldownPeriod             int32 = 300
	DefaultKEDAPollingInterval            int32 = 15
	DefaultKEDAFallbackFailureThreshold   int32 = 3
	DefaultKEDAFallbackReplicas           int32 = 1
	DefaultKEDAHTTPScalerAddress                = "keda-add-ons-http-external-scaler.keda:9090"
	DefaultKEDAHTTPResponseTimeoutSeconds int32 = 600
)

// ScaleToZero returns the Input's KEDA settings with their defaults, and
// whether claims may scale to zero at all.
func (in *Input) ScaleToZero() (KEDASettings, bool) {
	if in.KEDA == nil || !in.KEDA.Enabled {
		return KEDASettings{}, false
	}
	k := *in.KEDA
	k.CooldownPeriod = orPtr(k.CooldownPeriod, ptr(DefaultKEDACooldownPeriod))
	k.PollingInterval = orPtr(k.PollingInterval, ptr(DefaultKEDAPollingInterval))
	k.Fallback = orPtr(k.Fallback, &KEDAFallback{FailureThreshold: DefaultKEDAFallbackFailureThreshold, Replicas: DefaultKEDAFallbackReplicas})
	if a := k.HTTPAddOn; a != nil && a.Enabled {
		k.HTTPAddOn = &KEDAHTTPAddOn{
			Enabled:                true,
			ScalerAddress:          orString(a.ScalerAddress, DefaultKEDAHTTPScalerAddress),
			ResponseTimeoutSeconds: orPtr(a.ResponseTimeoutSeconds, ptr(DefaultKEDAHTTPResponseTimeoutSeconds)),
		}
	} else {
		k.HTTPAddOn = nil
	}
	return k, true
}
