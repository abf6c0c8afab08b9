package plan

import (
	"time"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// Poll is what a call knows that decides its TTL.
type Poll struct {
	// WatchCut says Crossplane's circuit breaker has cut the composite's
	// watch (observe.WatchCut).
	WatchCut bool
	// Settled says the composite is ready and nothing is under way
	// (see Changing).
	Settled bool
	// ReadsUnwatched says the call read a resource whose change Crossplane
	// would not report (a required resource before v2.4) and whose change
	// would change the output.
	ReadsUnwatched bool
}

// PollAfter decides the TTL of the function's response: how soon
// Crossplane reconciles the composite again though nothing it watches
// changed (input.poll; v1beta1.PollSettings says why); 0 asks for no
// poll:
//  1. while Crossplane's watch of the composite works and it watches
//     everything the call read, the watched interval (none by default):
//     every change calls the function anyway;
//  2. while the watch works but the call read something Crossplane does
//     not watch, the poll interval, so that its change is seen;
//  3. while its circuit breaker has cut the watch (watchCut) and the
//     composite is not ready (a pull, a rollout or a scale-up under way),
//     the changing poll, so that each step is seen in seconds;
//  4. while the watch is cut and the composite is ready and nothing is
//     under way (settled: see Changing), the settled poll, so that a
//     change of the claim is seen in seconds;
//  5. a cut-watch poll of 0, or one longer than the interval, gives the
//     interval.
func PollAfter(in *v1beta1.Input, p Poll) time.Duration {
	interval := in.PollInterval()
	if !p.WatchCut {
		if p.ReadsUnwatched {
			return interval
		}
		return in.WatchedInterval()
	}
	changing, settledPoll := in.WatchCutPolls()
	poll := changing
	if p.Settled {
		poll = settledPoll
	}
	if poll <= 0 || poll > interval {
		return interval
	}
	return poll
}

// Changing reports whether the plan waits for something it sees only by
// being called again, though every object it returns may be ready: a
// version whose servers make before break holds beyond its share, or
// that grows into it; departing servers kept; servers still on older
// weights while the wanted ones pull or start.
func (p *Plan) Changing() bool {
	if p.KeepsDepartingServers() {
		return true
	}
	for _, vp := range p.Versions {
		if vp.Held || vp.Growing {
			return true
		}
		if vp.Serving != nil && vp.Serving.ID != vp.Source.Wanted().ID {
			return true
		}
	}
	return false
}
