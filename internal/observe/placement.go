package observe

import (
	"fmt"
	"sort"
	"strings"
	"unicode"

	fnv1 "github.com/crossplane/function-sdk-go/proto/v1"
	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/internal/kinds/providerkubernetes"
	"github.com/inferno-ai/function-inferno/internal/reason"
	"github.com/inferno-ai/function-inferno/internal/render"
	"github.com/inferno-ai/function-inferno/internal/resolve"
	"github.com/inferno-ai/function-inferno/internal/structcodec"
	"google.golang.org/protobuf/types/known/structpb"
	"k8s.io/apimachinery/pkg/util/validation"
)

// Remote is one workload cluster's Object as the hub observes it, with
// what that cluster reports of the service, checked.
type Remote struct {
	// Cluster is the workload cluster, from the composition resource name
	// the function gave the Object.
	Cluster string
	// ProviderConfigName is the configuration the Object reaches the
	// cluster with, as the function last rendered it: it is how a cluster
	// the platform no longer offers is still reached until its
	// replacement serves. Empty when it is not a valid name.
	ProviderConfigName string
	// Synced is the Object's Synced condition: False when
	// provider-kubernetes cannot reach the cluster or apply there. Nil
	// before the provider first reports.
	Synced *providerkubernetes.Condition
	// Ready is render.ObjectReady: the cluster serves the service.
	Ready bool
	// Status is what the cluster reports of its InferenceService.
	Status RemoteStatus
}

// Reached says provider-kubernetes reaches the cluster (or has not yet
// said it cannot).
func (r *Remote) Reached() bool { return r.Synced == nil || r.Synced.Status != "False" }

// RemoteStatus is a workload cluster's report of its InferenceService,
// from the Object's status.atProvider.manifest. That cluster may be one
// the tenant controls, so nothing is taken on trust: a phase is one of the
// known phases, the replicas are bounded by what the claim can run, the
// URL is the one its name and namespace give, reasons are documented ones,
// the message is bounded and printable, and a report of another object
// than the one the hub applied is not read at all.
type RemoteStatus struct {
	Phase         v1alpha1.Phase
	ReadyReplicas int32
	URL           string
	Reasons       []string
	Message       string
	// Unread says why the report was not read, or which part of it was
	// left out; empty when all of it was read.
	Unread string
}

// remoteReport is the part of a remote InferenceService the hub reads.
type remoteReport struct {
	Metadata struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Status struct {
		Phase         string `json:"phase"`
		ReadyReplicas int64  `json:"readyReplicas"`
		URL           string `json:"url"`
		Message       string `json:"message"`
		Conditions    []struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		} `json:"conditions"`
	} `json:"status"`
}

// MaxRemoteMessage bounds a workload cluster's message copied to the hub.
const MaxRemoteMessage = 256

// MaxProviderMessage bounds the Object's Synced message copied to the
// hub's status: it can carry a whole HTTP error.
const MaxProviderMessage = 200

// remotePhases are the phases a workload cluster may report.
var remotePhases = map[v1alpha1.Phase]bool{
	v1alpha1.PhasePending: true, v1alpha1.PhasePulling: true, v1alpha1.PhaseStarting: true,
	v1alpha1.PhaseServing: true, v1alpha1.PhaseDegraded: true, v1alpha1.PhaseFailed: true,
	v1alpha1.PhaseStandby: true, v1alpha1.PhaseIdle: true,
}

// Placed decodes the observed Objects of a placed claim, by workload
// cluster, and checks what each cluster reports against the claim.
func Placed(ocds map[string]*fnv1.Resource, s *resolve.Spec) (map[string]*Remote, error) {
	out := map[string]*Remote{}
	names := make([]string, 0, len(ocds))
	for name := range ocds {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		cluster, ok := render.ClusterOfResource(name)
		c := ocds[name].GetResource()
		if !ok || c == nil {
			continue
		}
		o := &providerkubernetes.Object{}
		// The manifests are left out: the desired one is ours, and the
		// observed one is read leniently below, since a cluster's report
		// must never fail the hub's call.
		spec := c.GetFields()["spec"].GetStructValue()
		status := c.GetFields()["status"].GetStructValue()
		sub := &structpb.Struct{Fields: map[string]*structpb.Value{}}
		if v, ok := c.GetFields()["metadata"]; ok {
			sub.Fields["metadata"] = v
		}
		if v, ok := spec.GetFields()["providerConfigRef"]; ok {
			sub.Fields["spec"] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"providerConfigRef": v, "forProvider": structpb.NewStructValue(&structpb.Struct{})}})
		}
		if v, ok := status.GetFields()["conditions"]; ok {
			sub.Fields["status"] = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"conditions": v}})
		}
		if err := structcodec.Decode(sub, o, ""); err != nil {
			return nil, DecodeError(name, err)
		}
		r := &Remote{Cluster: cluster, Synced: o.Condition("Synced"), Ready: render.ObjectReady(o)}
		if r.Synced != nil {
			// The provider's message quotes the remote API server's
			// errors: the cluster's words, bounded as its report is.
			r.Synced.Message = bounded(r.Synced.Message, MaxProviderMessage)
		}
		if ref := o.Spec.ProviderConfigRef; ref != nil && len(validation.IsDNS1123Subdomain(ref.Name)) == 0 {
			r.ProviderConfigName = ref.Name
		}
		r.Status = readRemote(status.GetFields()["atProvider"].GetStructValue().GetFields()["manifest"].GetStructValue(), s)
		out[cluster] = r
	}
	return out, nil
}

// readRemote reads and checks a workload cluster's report (RemoteStatus).
func readRemote(manifest *structpb.Struct, s *resolve.Spec) RemoteStatus {
	if manifest == nil {
		return RemoteStatus{Unread: "the cluster has not reported the service yet"}
	}
	var rep remoteReport
	if err := structcodec.Decode(manifest, &rep, ""); err != nil {
		return RemoteStatus{Unread: "the cluster's report cannot be read: " + bounded(err.Error(), MaxRemoteMessage)}
	}
	if rep.Metadata.Name != s.Name || rep.Metadata.Namespace != s.Placement.Namespace {
		return RemoteStatus{Unread: "the cluster reports another object than the one placed there; it was not read"}
	}
	var st RemoteStatus
	var unread []string
	switch p := v1alpha1.Phase(rep.Status.Phase); {
	case remotePhases[p]:
		st.Phase = p
	case p != "":
		unread = append(unread, "an unknown phase")
	}
	switch most := int64(s.MostServers()); {
	case rep.Status.ReadyReplicas < 0 || rep.Status.ReadyReplicas > most:
		unread = append(unread, fmt.Sprintf("%d ready replicas, outside 0–%d", rep.Status.ReadyReplicas, most))
	default:
		st.ReadyReplicas = int32(rep.Status.ReadyReplicas)
	}
	switch want := render.ServiceURLOf(s.Name, s.Placement.Namespace); rep.Status.URL {
	case "", want:
		st.URL = rep.Status.URL
	default:
		unread = append(unread, "a URL other than its Service's")
	}
	for _, c := range rep.Status.Conditions {
		if c.Type != reason.ConditionWeightsReady && c.Type != reason.ConditionServerReady {
			continue
		}
		if _, ok := reason.Named(c.Reason); ok && len(st.Reasons) < 4 {
			st.Reasons = append(st.Reasons, c.Reason)
		}
	}
	st.Message = bounded(rep.Status.Message, MaxRemoteMessage)
	if len(unread) > 0 {
		st.Unread = "left out of the cluster's report: " + strings.Join(unread, ", ")
	}
	return st
}

// bounded is a message cut to most characters, with control characters
// (newlines, escapes) made spaces.
func bounded(m string, most int) string {
	var b strings.Builder
	n := 0
	for _, r := range m {
		if n == most {
			b.WriteString("…")
			break
		}
		if unicode.IsControl(r) || r == unicode.ReplacementChar {
			r = ' '
		}
		b.WriteRune(r)
		n++
	}
	return b.String()
}
