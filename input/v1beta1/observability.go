package v1beta1

// Monitoring says how the model servers' metrics reach the platform's
// Prometheus.
type Monitoring struct {
	// PodMonitor, when enabled, gives every InferenceService a
	// PodMonitor (monitoring.coreos.com/v1, the Prometheus Operator's)
	// that scrapes its model servers on the runtime preset's metrics port
	// and path. The cluster must serve the PodMonitor CRD.
	// +optional
	PodMonitor *PodMonitorSettings `json:"podMonitor,omitempty"`
}

// PodMonitorSettings shape the PodMonitors.
type PodMonitorSettings struct {
	// Enabled renders the PodMonitors. Defaults to false.
	Enabled bool `json:"enabled"`

	// Labels are put on every PodMonitor, e.g. the one the Prometheus's
	// podMonitorSelector selects (release: prometheus).
	// +optional
	// +kubebuilder:validation:MaxProperties=16
	Labels map[string]string `json:"labels,omitempty"`

	// Interval between scrapes, as Prometheus writes durations (30s, 1m).
	// Empty keeps the Prometheus's own scrape interval.
	// +optional
	// +kubebuilder:validation:Pattern=`^(0|(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$`
	Interval string `json:"interval,omitempty"`
}

// PullProgress makes pull Jobs report how far their download is: each
// pull pod patches a ConfigMap of its own (and only that one, through a
// ServiceAccount whose Role names it) with the bytes it has, the total
// when the source says it, its rate and when it started and last
// reported; the claim's status.pulls and its WeightsReady message show
// them. It gives the pull pods a Kubernetes API token, limited to that
// ConfigMap (docs/security.md).
type PullProgress struct {
	// Enabled makes pull Jobs report their progress. Defaults to false.
	Enabled bool `json:"enabled"`

	// IntervalSeconds between two reports of a pull pod: each is one
	// PATCH to the API server, and one reconcile of the claim. Defaults
	// to 5.
	// +optional
	// +kubebuilder:validation:Minimum=2
	// +kubebuilder:validation:Maximum=300
	IntervalSeconds *int32 `json:"intervalSeconds,omitempty"`
}

// DefaultProgressIntervalSeconds is how often a pull pod reports its
// progress.
const DefaultProgressIntervalSeconds = int32(5)

// Environment of a puller that reports progress (input.pullProgress):
// the API path of the ConfigMap to patch and the seconds between reports.
// The token to patch it with is at ServiceAccountTokenDir.
const (
	EnvProgressPath     = "PROGRESS_PATH"
	EnvProgressInterval = "PROGRESS_INTERVAL_SECONDS"
	// ServiceAccountTokenDir is where a reporting pull pod finds its
	// token and the cluster's CA (token, ca.crt), the usual place.
	ServiceAccountTokenDir = "/var/run/secrets/kubernetes.io/serviceaccount"
)

// Keys of a pull's progress ConfigMap, written by the pull pod, read by
// the function. Integers are decimal; times RFC 3339 in UTC.
const (
	ProgressBytes     = "bytes"     // bytes downloaded so far
	ProgressTotal     = "total"     // bytes in all, empty when unknown
	ProgressRate      = "rate"      // bytes per second over the last interval
	ProgressStartedAt = "startedAt" // when the download started
	ProgressUpdatedAt = "updatedAt" // when this report was written
)

// ProgressInterval returns the seconds between two progress reports, 0
// when pulls do not report.
func (in *Input) ProgressInterval() int32 {
	p := in.PullProgress
	if p == nil || !p.Enabled {
		return 0
	}
	if p.IntervalSeconds != nil {
		return *p.IntervalSeconds
	}
	return DefaultProgressIntervalSeconds
}
