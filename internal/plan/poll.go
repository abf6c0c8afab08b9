package plan

import (
	"time"

	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// PollAfter decides the TTL of the function's response: how soon
// Crossplane reconciles the composite again though nothing it watches
// changed (input.poll; v1beta1.PollSettings says why):
//  1. while Crossplane's watch of the composite works, the poll interval,
//     a drift check;
//  2. while its circuit breaker has cut the watch (watchCut) and the
//     composite is not ready (a pull, a rollout or a scale-up under way),
//     the changing poll, so that each step is seen in seconds;
//  3. while the watch is cut and the composite is ready and nothing is
//     under way (settled: see Changing), the settled poll, so that a
//     change of the claim is seen in seconds;
//  4. a cut-watch poll of 0, or one longer than the interval, gives the
//     interval.
func PollAfter(in *v1beta1.Input, watchCut, settled bool) time.Duration {
	interval := in.PollInterval()
	if !watchCut {
		return interval
	}
	changing, settledPoll := in.WatchCutPolls()
	poll := changing
	if settled {
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
