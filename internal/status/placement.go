package status

import (
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
)

// OfPlacement reports a placed claim: each cluster in status.clusters
// (chosen ones first, then those that leave once their replacements
// serve), one phase for the whole claim, the first serving cluster's URL,
// and the Placed condition.
//
// The claim's phase is Serving while any cluster serves it and none that
// should has failed or gone out of reach (a cluster still starting is a
// move or a scale-out under way); Degraded when one serves and another
// has failed or cannot be reached; otherwise Failed when a chosen cluster
// failed, else the earliest phase among the chosen clusters.
func OfPlacement(p *plan.Placement) Report {
	var r Report
	var unreachable, failing []string
	// serving counts every cluster that serves, servingChosen the chosen
	// ones among them.
	serving, servingChosen := 0, 0
	earliest := v1alpha1.PhaseServing
	for i, c := range append(append([]plan.Placed(nil), p.Serving...), p.Leaving...) {
		leaving := i >= len(p.Serving)
		cs := clusterStatus(p, c, leaving)
		r.Status.Clusters = append(r.Status.Clusters, cs)
		if c.Observed != nil && c.Observed.Status.Unread != "" {
			r.Warnings = append(r.Warnings, fmt.Sprintf("status.clusters: cluster %s: %s", c.Cluster, c.Observed.Status.Unread))
		}
		switch {
		case cs.Phase == v1alpha1.PhaseUnreachable:
			unreachable = append(unreachable, c.Cluster)
			continue
		case c.Ready():
			serving++
			if !leaving {
				servingChosen++
			}
			r.Status.ReadyReplicas += cs.ReadyReplicas
			if r.Status.URL == "" {
				r.Status.URL = cs.URL
			}
			continue
		}
		if leaving {
			continue
		}
		phase := v1alpha1.Phase(cs.Phase)
		switch phase {
		case v1alpha1.PhaseFailed, v1alpha1.PhaseDegraded:
			failing = append(failing, c.Cluster)
		}
		if phaseOrder(phase) < phaseOrder(earliest) {
			earliest = phase
		}
	}

	var cond reason.Condition
	switch {
	case len(unreachable) > 0:
		cond = reason.ClusterUnreachable.Condition(fmt.Sprintf("provider-kubernetes cannot reach cluster %s; nothing there is changed or deleted until it can", strings.Join(unreachable, ", ")))
	case len(failing) > 0:
		cond = reason.ClustersFailing.Condition(fmt.Sprintf("cluster %s reports the service failing; see status.clusters", strings.Join(failing, ", ")))
	case p.Short() != "":
		cond = reason.PlacedShort.Condition(p.Short())
	case len(p.Serving) > 0 && !anyObserved(p.Serving):
		cond = reason.Placing.Condition(fmt.Sprintf("creating the service on cluster %s", clusterNames(p.Serving)))
	case p.Changing():
		msg := fmt.Sprintf("%d of %d clusters serve", servingChosen, len(p.Serving))
		if len(p.Leaving) > 0 {
			msg += fmt.Sprintf("; cluster %s serves until then", clusterNames(p.Leaving))
		}
		cond = reason.ClustersStarting.Condition(msg)
	default:
		cond = reason.Placed.Condition(fmt.Sprintf("served on cluster %s", clusterNames(p.Serving)))
	}
	r.Conditions = []reason.Condition{cond}

	switch {
	case serving > 0 && len(unreachable) == 0 && len(failing) == 0:
		r.Status.Phase = v1alpha1.PhaseServing
	case serving > 0:
		r.Status.Phase = v1alpha1.PhaseDegraded
	case len(failing) > 0:
		r.Status.Phase = v1alpha1.PhaseFailed
	case len(p.Serving) == 0 || len(unreachable) > 0:
		r.Status.Phase = v1alpha1.PhasePending
	default:
		r.Status.Phase = earliest
	}
	r.Status.Message = cond.Message
	if r.Status.URL != "" {
		r.Status.ServiceName = p.Spec.Name
	}
	return r
}

// clusterStatus is one cluster's entry of status.clusters.
func clusterStatus(p *plan.Placement, c plan.Placed, leaving bool) v1alpha1.ClusterStatus {
	cs := v1alpha1.ClusterStatus{Name: c.Cluster, Namespace: p.Spec.Placement.Namespace, Phase: v1alpha1.ClusterPhase(v1alpha1.PhasePending)}
	o := c.Observed
	if o == nil {
		cs.Message = "the Object is being created"
		return cs
	}
	st := o.Status
	cs.ReadyReplicas, cs.URL, cs.Reasons = st.ReadyReplicas, st.URL, st.Reasons
	if st.Phase != "" {
		cs.Phase = v1alpha1.ClusterPhase(st.Phase)
	}
	cs.Message = st.Message
	switch {
	case !o.Reached():
		// The provider's own message says what failed (a refused
		// connection, a timeout, a refused apply), bounded by observe.
		cs.Phase = v1alpha1.PhaseUnreachable
		cs.Message = "provider-kubernetes cannot reach the cluster or apply there: " + o.Synced.Message
	case leaving:
		cs.Phase = v1alpha1.PhaseDraining
		cs.Message = "serves until the clusters that replace it do"
	}
	return cs
}

// phaseOrder orders the phases of a service's life, for the earliest
// among clusters.
func phaseOrder(p v1alpha1.Phase) int {
	switch p {
	case v1alpha1.PhasePending:
		return 0
	case v1alpha1.PhasePulling:
		return 1
	case v1alpha1.PhaseStarting:
		return 2
	}
	return 3
}

func anyObserved(cs []plan.Placed) bool {
	for _, c := range cs {
		if c.Observed != nil {
			return true
		}
	}
	return false
}

func clusterNames(cs []plan.Placed) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Cluster
	}
	return strings.Join(names, ", ")
}
