package status

import (
	"fmt"
	"strings"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/plan"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
)

// OfCache reports each revision and the cache as a whole:
//  1. any revision failed: Failed, with each failure;
//  2. every revision pulled: Ready;
//  3. any revision's Job running: Pulling;
//  4. any revision waiting for its Secret: Pending, CredentialsMissing;
//  5. otherwise Pending.
func OfCache(c *plan.Cache) (v1alpha1.ModelCacheStatus, reason.Condition) {
	s, pulls := c.Spec, c.Pulls
	st := v1alpha1.ModelCacheStatus{PVCName: render.PVCName(s), URI: s.Model.URI}
	// failed and waiting are each revision's text for status.message,
	// said the text without the figures of the moment, for the condition.
	var failed, waiting, said []string
	running, creds := false, false
	why := render.PullFailedOther // of the first failed revision
	for _, p := range pulls {
		r := v1alpha1.CachedRevision{Revision: p.Model.Revision, Path: render.CacheDir(p.Model)}
		w := p.Condition()
		r.Message = w.Text()
		switch p.State() {
		case render.JobComplete:
			r.Phase = v1alpha1.CacheReady
		case render.JobFailed:
			r.Phase = v1alpha1.CacheFailed
			if len(failed) == 0 {
				why = p.Failure
			}
			failed = append(failed, w.Text())
		case render.JobRunning:
			r.Phase = v1alpha1.CachePulling
			running = true
			waiting, said = append(waiting, w.Text()), append(said, w.Message)
		default:
			r.Phase = v1alpha1.CachePending
			waiting, said = append(waiting, w.Text()), append(said, w.Message)
			creds = creds || w.Reason == reason.CredentialsMissing
		}
		st.Revisions = append(st.Revisions, r)
	}
	n := len(s.Versions)
	switch {
	case len(failed) > 0:
		st.Phase, st.Message = v1alpha1.CacheFailed, strings.Join(failed, "; ")
		switch why {
		case render.PullStalled:
			return st, reason.PullStalled.Condition(st.Message)
		case render.PullTimedOut:
			return st, reason.PullTimedOut.Condition(st.Message)
		}
		return st, reason.PullFailed.Condition(st.Message)
	case len(waiting) == 0:
		st.Phase = v1alpha1.CacheReady
		st.Message = fmt.Sprintf("%d of %d revisions of %s are in volume %s", n, n, s.Model.URI, st.PVCName)
		return st, reason.Pulled.Condition(st.Message)
	case running:
		st.Phase, st.Message = v1alpha1.CachePulling, strings.Join(waiting, "; ")
		return st, reason.Pulling.Condition(strings.Join(said, "; ")).WithDetail(st.Message)
	case creds:
		st.Phase, st.Message = v1alpha1.CachePending, strings.Join(waiting, "; ")
		return st, reason.CredentialsMissing.Condition(st.Message)
	default:
		st.Phase, st.Message = v1alpha1.CachePending, strings.Join(waiting, "; ")
		return st, reason.PullPending.Condition(st.Message)
	}
}
