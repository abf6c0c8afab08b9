package plan

import (
	"sort"

	"github.com/inferno-ai/function-inferno/internal/render"
)

// RouteCandidate is a Service the route may send requests to, and how
// ready it is.
type RouteCandidate struct {
	Service string
	// Weight is the percent spec.traffic asks for it.
	Weight int32
	// Wanted is the servers it should have for that weight; Ready the
	// servers ready behind it.
	Wanted, Ready int32
}

// percent is one percent of a route's weight in the units routeWeights
// computes in: integers, so that the same request always gives the same
// weights.
const percent = int64(1_000_000)

// RouteWeights weighs the route's candidates by their readiness: a Gateway
// sends a backend its share whether or not anything answers there, so a
// version still loading its model would fail its share of requests.
//  1. Each candidate gets its weight scaled by the share of its wanted
//     servers that are ready.
//  2. The rest goes to the candidates with more ready servers than they
//     want (a version losing weight, kept until the others are ready), in
//     proportion to those spare servers;
//  3. else to fallback (the Service <name>, whose servers include the
//     primary's old ones during its rollout), when it has ready servers;
//  4. else to the candidates with a ready server, in proportion to them.
//  5. The weights are whole percents summing to 100, rounded by largest
//     remainder; a candidate with no ready server gets none.
//
// The fallback is a backend only when it gets a weight. ok is false when
// nothing has a ready server: the caller then keeps the route's last
// weights.
func RouteWeights(cands []RouteCandidate, fallback RouteCandidate) (backends []render.RouteBackend, ok bool) {
	all := append(append([]RouteCandidate(nil), cands...), fallback)
	exact := make([]int64, len(all))
	rest := 100 * percent
	for i, c := range cands {
		if c.Wanted > 0 && c.Ready > 0 {
			exact[i] = int64(c.Weight) * percent * int64(min(c.Ready, c.Wanted)) / int64(c.Wanted)
			rest -= exact[i]
		}
	}
	spread := func(by func(i int, c RouteCandidate) int64) bool {
		total := int64(0)
		for i, c := range all {
			total += by(i, c)
		}
		if total == 0 {
			return false
		}
		first, given := -1, int64(0)
		for i, c := range all {
			if x := by(i, c); x > 0 {
				share := rest * x / total
				exact[i] += share
				given += share
				if first < 0 {
					first = i
				}
			}
		}
		exact[first] += rest - given
		return true
	}
	last := len(all) - 1
	switch {
	case rest == 0:
	case spread(func(i int, c RouteCandidate) int64 {
		if i == last {
			return 0
		}
		return int64(max(0, c.Ready-c.Wanted))
	}):
	case spread(func(i int, c RouteCandidate) int64 {
		if i != last {
			return 0
		}
		return int64(c.Ready)
	}):
	case spread(func(i int, c RouteCandidate) int64 {
		if i == last {
			return 0
		}
		return int64(c.Ready)
	}):
	default:
		return nil, false
	}

	weights := make([]int32, len(all))
	order := make([]int, 0, len(all))
	left := int32(100)
	for i, e := range exact {
		weights[i] = int32(e / percent)
		left -= weights[i]
		if all[i].Ready > 0 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, b int) bool { return exact[order[a]]%percent > exact[order[b]]%percent })
	for _, i := range order {
		if left <= 0 {
			break
		}
		weights[i]++
		left--
	}
	for i, c := range cands {
		backends = append(backends, render.RouteBackend{Service: c.Service, Weight: weights[i]})
	}
	if weights[last] > 0 {
		backends = append(backends, render.RouteBackend{Service: fallback.Service, Weight: weights[last]})
	}
	return backends, true
}

// route is the HTTPRoute: its weighted backends and what the gateway
// controller said of it.
type route struct {
	// Pool says its backend is the claim's InferencePool, not Services.
	Pool     bool
	Backends []render.RouteBackend
	// Held says no backend had a ready server: the route keeps the
	// weights it was observed with.
	Held  bool
	ready bool
	State render.RouteState
}

// planRoute decides the HTTPRoute. It comes with the primary's Service in
// a split, and stays while the Input names a Gateway: a promotion that
// drops spec.traffic keeps it, with all the weight on the Service <name>.
func (p *Plan) planRoute() *route {
	s, o := p.Spec, p.Observed
	if s.Pool != nil {
		// On an InferencePool: with the pool, to the pool.
		if !p.MainService {
			return nil
		}
		rp := &route{Pool: true}
		rp.ready, rp.State = render.RouteReady(s, o.Route, nil)
		return rp
	}
	if s.Gateway == nil || !(s.Split && p.Versions[0].RenderService || o.Route != nil) {
		return nil
	}
	var cands []RouteCandidate
	if s.Split {
		// Only Services that exist: a backend of none would have the
		// gateway refuse the route's references.
		for _, vp := range p.Versions {
			if !vp.RenderService {
				continue
			}
			cands = append(cands, RouteCandidate{
				Service: vp.VersionServiceName(s), Weight: vp.Weight, Wanted: vp.Target,
				Ready: p.readyOfVersion(vp.Model.Version),
			})
		}
		// A departing version with servers kept is spare capacity.
		for _, d := range p.Departing {
			if d.RenderDeployment && d.renderService {
				cands = append(cands, RouteCandidate{Service: d.VersionServiceName(s), Ready: p.readyOfVersion(d.Model.Version)})
			}
		}
	} else {
		cands = []RouteCandidate{{Service: s.Name, Weight: 100, Wanted: p.Versions[0].Target, Ready: p.readyOfAll()}}
	}
	fallback := RouteCandidate{Service: s.Name}
	if s.Split {
		// The Service <name> selects every server, the primary's old ones
		// during its rollout included, which no version's Service does.
		counted := int32(0)
		for _, c := range cands {
			counted += c.Ready
		}
		fallback.Ready = max(0, p.readyOfAll()-counted)
	}
	rp := &route{}
	backends, ok := RouteWeights(cands, fallback)
	if !ok {
		if last := o.RouteBackends(); len(last) > 0 {
			backends, rp.Held = last, true
		} else {
			// Nothing ever served: the primary's Service takes it all.
			backends = make([]render.RouteBackend, len(cands))
			for i, c := range cands {
				backends[i] = render.RouteBackend{Service: c.Service}
			}
			backends[0].Weight = 100
		}
	}
	rp.Backends = backends
	rp.ready, rp.State = render.RouteReady(s, o.Route, backends)
	return rp
}
