package v1beta1

import "time"

// PollSettings say how soon the function asks Crossplane to call it again:
// the TTL of its response, after which Crossplane reconciles the composite
// whether or not anything it watches changed.
//
// On Crossplane v2 a composite moves on watch events: a change of the
// claim, of any object it composes, or of its Composition calls the
// function at once. Crossplane v2.4 and later also watch the resources the
// function requires (a Secret, a ModelCache); earlier versions do not, so
// a change of one is seen only on the next call. Every poll costs a
// RunFunction call, a server-side apply of every composed object and an
// Event for each one not ready (docs/performance.md): a composite whose
// inputs are all watched needs none.
// Crossplane's per-composite circuit breaker (v2.2 and later) cuts those
// events off for five minutes when they come faster than its token bucket
// allows, which a claim's pods coming up one by one while it is changed
// can do; it then lets one event through every 30 seconds, and the TTL is
// the only other way the composite is reconciled. While the breaker is
// open (the composite's condition Responsive=False, reason
// WatchCircuitOpen), the function asks to be called again soon, sooner
// still while something it composed is not yet ready, so that a change
// converges in seconds rather than on the next half-open event or the
// default poll. The polls cost one call each, and Crossplane's no-op
// applies of the composed objects, and stop when the breaker closes.
type PollSettings struct {
	// IntervalSeconds is the TTL while Crossplane's watch works but the
	// function reads something Crossplane does not watch: on Crossplane
	// before v2.4 (requiredResourcesWatched false), the ModelCache a
	// service serves from. It also caps the polls while the watch is cut.
	// Defaults to 60.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=86400
	IntervalSeconds *int32 `json:"intervalSeconds,omitempty"`

	// RequiredResourcesWatched says the Crossplane that calls the function
	// watches the resources it requires and sends them with the first call
	// of a reconcile: true on Crossplane v2.4 and later. No capability in
	// the request tells v2.4 from earlier versions (both announce the same
	// five), so the platform says it. When true, a change of a Secret, a
	// ModelCache or a Service the function reads calls it at once, and
	// only watchedIntervalSeconds applies while the watch works. Defaults
	// to false: the older path, polling at intervalSeconds where a change
	// would otherwise go unseen.
	// +optional
	RequiredResourcesWatched *bool `json:"requiredResourcesWatched,omitempty"`

	// WatchedIntervalSeconds is the TTL while Crossplane watches everything
	// the function reads: a drift check, since every change calls the
	// function anyway. 0, the default, asks for no poll: Crossplane then
	// reconciles the composite on events only, and a claim at rest costs
	// no call and no write.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=86400
	WatchedIntervalSeconds *int32 `json:"watchedIntervalSeconds,omitempty"`

	// WatchCutChangingSeconds is the TTL while Crossplane's circuit breaker
	// has cut the composite's watch and something the function composed is
	// not ready yet (a pull, a rollout, a scale-up): how long a step of
	// the change may wait to be seen. 0 turns the faster polls off.
	// Defaults to 2.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	WatchCutChangingSeconds *int32 `json:"watchCutChangingSeconds,omitempty"`

	// WatchCutSettledSeconds is the TTL while the breaker has cut the
	// watch and everything is ready: how long a change of the claim may
	// wait to be seen (a change that comes 30 s or more after the last
	// event Crossplane let through is seen at once). 0 turns these polls
	// off. Defaults to 3.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=3600
	WatchCutSettledSeconds *int32 `json:"watchCutSettledSeconds,omitempty"`
}

// Defaults of input.poll.
const (
	DefaultPollIntervalSeconds     = int32(60)
	DefaultWatchedIntervalSeconds  = int32(0)
	DefaultWatchCutChangingSeconds = int32(2)
	DefaultWatchCutSettledSeconds  = int32(3)
)

// PollInterval is input.poll.intervalSeconds, or its default.
func (in *Input) PollInterval() time.Duration {
	return seconds(in.poll().IntervalSeconds, DefaultPollIntervalSeconds)
}

// WatchedInterval is input.poll.watchedIntervalSeconds, or its default;
// 0 means no poll.
func (in *Input) WatchedInterval() time.Duration {
	return seconds(in.poll().WatchedIntervalSeconds, DefaultWatchedIntervalSeconds)
}

// RequiredResourcesWatched is input.poll.requiredResourcesWatched.
func (in *Input) RequiredResourcesWatched() bool {
	w := in.poll().RequiredResourcesWatched
	return w != nil && *w
}

// WatchCutPolls are input.poll's TTLs while Crossplane's circuit breaker
// has cut the composite's watch, for a composite that is changing and one
// that is settled; 0 means no faster poll.
func (in *Input) WatchCutPolls() (changing, settled time.Duration) {
	p := in.poll()
	return seconds(p.WatchCutChangingSeconds, DefaultWatchCutChangingSeconds), seconds(p.WatchCutSettledSeconds, DefaultWatchCutSettledSeconds)
}

func (in *Input) poll() PollSettings {
	if in == nil || in.Poll == nil {
		return PollSettings{}
	}
	return *in.Poll
}

func seconds(v *int32, def int32) time.Duration {
	if v == nil {
		return time.Duration(def) * time.Second
	}
	return time.Duration(*v) * time.Second
}
