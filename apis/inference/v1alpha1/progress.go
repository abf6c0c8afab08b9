package v1alpha1

// PullStatus is one pull of weights into the service's cache volume, and
// how far it is, as its pull pod last reported (input.pullProgress). The
// function keeps no clock: the times, the bytes and the rate are the pull
// pod's; the estimate is the rest of the bytes at that rate.
type PullStatus struct {
	// Version is the version whose weights are pulled (spec.model.version,
	// or a version of spec.traffic); empty for an adapter's.
	// +optional
	Version string `json:"version,omitempty"`

	// Adapter is the LoRA adapter (spec.adapters[].name) whose weights are
	// pulled; empty for a version's.
	// +optional
	Adapter string `json:"adapter,omitempty"`

	// URI of the weights.
	URI string `json:"uri"`

	// Job is the pull Job's name.
	Job string `json:"job"`

	// State is Pending, Pulling, Pulled or Failed.
	State string `json:"state"`

	// BytesDone is what the pull pod has downloaded so far.
	// +optional
	BytesDone *int64 `json:"bytesDone,omitempty"`

	// BytesTotal is the size of the weights, when the source says it.
	// +optional
	BytesTotal *int64 `json:"bytesTotal,omitempty"`

	// BytesPerSecond is the download rate over the pod's last interval.
	// +optional
	BytesPerSecond *int64 `json:"bytesPerSecond,omitempty"`

	// ETASeconds is the time left at that rate, when the total is known.
	// +optional
	ETASeconds *int64 `json:"etaSeconds,omitempty"`

	// StartedAt is when the download started, by the pull pod's clock.
	// +optional
	StartedAt string `json:"startedAt,omitempty"`

	// UpdatedAt is when the pull pod wrote this report: a report that
	// stops moving is one that stopped coming.
	// +optional
	UpdatedAt string `json:"updatedAt,omitempty"`

	// Progress says it in words: "3.1 of 15.0 GiB, 120 MiB/s, ETA 2m".
	// +optional
	Progress string `json:"progress,omitempty"`
}
