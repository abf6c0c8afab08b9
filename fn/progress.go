package fn

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/inferno-ai/function-inferno/apis/inference/v1alpha1"
	"github.com/inferno-ai/function-inferno/input/v1beta1"
)

// Pull progress (input.pullProgress). No controller of ours watches a
// download, and the function keeps no state and reads no clock, so the
// pull pod itself reports: every interval it patches a ConfigMap of its
// own with what it has (bytes, the total when the source said it, its
// rate over the interval, when it started and when it wrote), and the
// function, which observes that ConfigMap like any composed object, only
// reads and formats it. Four small objects per pull, named after the
// weights (<name>-progress-<weights hash>), so the pull Job's template
// can name them before its own hash is known:
//   - the ConfigMap, rendered without data: Crossplane applies it with
//     server-side apply, so the data the pod writes is another field
//     manager's and survives every apply (test/e2e: 31-pull-progress);
//   - a ServiceAccount the pull pod runs under, with a token projected
//     into the pull pod only (automountServiceAccountToken stays false);
//   - a Role that allows get and patch of that one ConfigMap
//     (resourceNames) and nothing else, and its RoleBinding.

// Composition resource names of a pull's progress objects, each followed
// by the weights hash.
const (
	resourceProgressPrefix       = "pull-progress-"
	resourceProgressSAPrefix     = "pull-progress-sa-"
	resourceProgressRolePrefix   = "pull-progress-role-"
	resourceProgressBindngPrefix = "pull-progress-rolebinding-"
)

// volumeProgressToken is the pull pod's projected token volume.
const volumeProgressToken = "progress-token"

// progressTokenSeconds is the projected token's lifetime; the kubelet
// renews it at 80%, and the reporter reads it afresh for every report.
const progressTokenSeconds = int64(3600)

// pullProgress is input.pullProgress, resolved.
type pullProgress struct {
	// Interval is the seconds between two reports.
	Interval int32
}

// resolveProgress reads input.pullProgress; nil when pulls do not report.
func resolveProgress(in *v1beta1.Input, errs *fieldErrors) *pullProgress {
	n := in.ProgressInterval()
	if n == 0 {
		return nil
	}
	if n < 2 || n > 300 {
		errs.add("input.pullProgress.intervalSeconds", "%d is out of range; use 2 to 300 seconds (each report is a PATCH to the API server and a reconcile of the claim)", n)
	}
	return &pullProgress{Interval: n}
}

// progressName names a pull's progress objects, after its weights.
func progressName(s *resolvedSpec, m model) string { return s.Name + "-progress-" + m.Hash }

// progressPath is the API path of a pull's ConfigMap, which the pull pod
// patches.
func progressPath(s *resolvedSpec, m model) string {
	return "/api/v1/namespaces/" + s.Namespace + "/configmaps/" + progressName(s, m)
}

// progressPod is what a reporting pull pod adds to its spec: its
// ServiceAccount, the environment that says where to report, and the
// projected token and CA at the usual place.
func progressPod(s *resolvedSpec, m model, spec *corev1.PodSpec) {
	spec.ServiceAccountName = progressName(s, m)
	c := &spec.Containers[0]
	c.Env = append(c.Env,
		corev1.EnvVar{Name: v1beta1.EnvProgressPath, Value: progressPath(s, m)},
		corev1.EnvVar{Name: v1beta1.EnvProgressInterval, Value: strconv.Itoa(int(s.Progress.Interval))},
	)
	c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: volumeProgressToken, MountPath: v1beta1.ServiceAccountTokenDir, ReadOnly: true})
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: volumeProgressToken, VolumeSource: corev1.VolumeSource{
		Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token", ExpirationSeconds: ptrTo(progressTokenSeconds)}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
			}},
		}},
	}})
}

// progressResources are a reporting pull's ConfigMap, ServiceAccount,
// Role and RoleBinding, each ready once observed: none of them has a
// status to wait for.
func progressResources(s *resolvedSpec, v *modelVersion, o observed) []composedResource {
	h := v.Model.Hash
	return []composedResource{
		{Name: resourceProgressPrefix + h, Object: renderProgressConfigMap(s, v), Ready: o.has(resourceProgressPrefix + h)},
		{Name: resourceProgressSAPrefix + h, Object: renderProgressServiceAccount(s, v), Ready: o.has(resourceProgressSAPrefix + h)},
		{Name: resourceProgressRolePrefix + h, Object: renderProgressRole(s, v), Ready: o.has(resourceProgressRolePrefix + h)},
		{Name: resourceProgressBindngPrefix + h, Object: renderProgressRoleBinding(s, v), Ready: o.has(resourceProgressBindngPrefix + h)},
	}
}

// progressReport is what a pull pod last wrote into its ConfigMap. The
// data is the pod's, and whoever may write ConfigMaps in the namespace
// can write it too: every field is checked, and one that does not read
// is left out rather than refused (it is a report, not a spec).
type progressReport struct {
	Bytes, Total, Rate   *int64
	StartedAt, UpdatedAt string
}

// maxReportedBytes bounds the integers a report may carry: 1 PiB, far
// beyond any weights, well within what status fields and float formatting
// hold exactly.
const maxReportedBytes = int64(1) << 50

// readProgress reads a pull's observed ConfigMap; nil without one or
// before the pod's first report.
func readProgress(cm *corev1.ConfigMap) *progressReport {
	if cm == nil || len(cm.Data) == 0 {
		return nil
	}
	count := func(key string) *int64 {
		n, err := strconv.ParseInt(cm.Data[key], 10, 64)
		if err != nil || n < 0 || n > maxReportedBytes {
			return nil
		}
		return &n
	}
	when := func(key string) string {
		t, err := time.Parse(time.RFC3339, cm.Data[key])
		if err != nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	r := &progressReport{Bytes: count(v1beta1.ProgressBytes), Total: count(v1beta1.ProgressTotal), Rate: count(v1beta1.ProgressRate),
		StartedAt: when(v1beta1.ProgressStartedAt), UpdatedAt: when(v1beta1.ProgressUpdatedAt)}
	if r.Bytes == nil {
		return nil
	}
	// A total below what is done is a total that does not hold (a
	// redirect's, a retry's): unknown.
	if r.Total != nil && *r.Total < *r.Bytes {
		r.Total = nil
	}
	return r
}

// eta is the seconds left at the reported rate, nil when the total or a
// rate is unknown.
func (r *progressReport) eta() *int64 {
	if r.Total == nil || r.Rate == nil || *r.Rate == 0 {
		return nil
	}
	left := *r.Total - *r.Bytes
	return ptrTo((left + *r.Rate - 1) / *r.Rate)
}

// words says the report as the WeightsReady message does: "3.1 of 15.0
// GiB, 120 MiB/s, ETA 2m"; without a total "3.1 GiB so far, 120 MiB/s".
func (r *progressReport) words() string {
	var msg string
	if r.Total != nil {
		unit := byteUnit(*r.Total)
		msg = fmt.Sprintf("%s of %s %s", inUnit(*r.Bytes, unit), inUnit(*r.Total, unit), unit.name)
		if *r.Total > 0 {
			msg += fmt.Sprintf(" (%d%%)", *r.Bytes*100 / *r.Total)
		}
	} else {
		unit := byteUnit(*r.Bytes)
		msg = fmt.Sprintf("%s %s so far", inUnit(*r.Bytes, unit), unit.name)
	}
	if r.Rate != nil {
		unit := byteUnit(*r.Rate)
		msg += fmt.Sprintf(", %s %s/s", inUnit(*r.Rate, unit), unit.name)
	}
	if eta := r.eta(); eta != nil {
		msg += ", ETA " + duration(*eta)
	}
	return msg
}

// unit is a binary byte unit.
type unit struct {
	name string
	size int64
}

var units = []unit{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// byteUnit is the largest unit n has at least one of; bytes below a KiB.
func byteUnit(n int64) unit {
	for _, u := range units {
		if n >= u.size {
			return u
		}
	}
	return unit{"B", 1}
}

// inUnit writes n in u with one decimal, bytes as a whole number.
func inUnit(n int64, u unit) string {
	if u.size == 1 {
		return strconv.FormatInt(n, 10)
	}
	// Tenths, rounded down, in integers: the same report always reads
	// the same.
	tenths := n * 10 / u.size
	return fmt.Sprintf("%d.%d", tenths/10, tenths%10)
}

// duration writes seconds as 45s, 2m, 1h5m: an estimate, rounded up to
// what a reader acts on.
func duration(s int64) string {
	switch {
	case s < 90:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm", (s+59)/60)
	default:
		m := (s + 59) / 60
		return fmt.Sprintf("%dh%dm", m/60, m%60)
	}
}

// progressMessage is what the WeightsReady message adds while a reporting
// pull runs.
func (p *pulledWeights) progressMessage() string {
	if p.s.Progress == nil {
		return ""
	}
	if p.report == nil {
		return "; no progress report yet"
	}
	msg := ": " + p.report.words()
	if p.report.UpdatedAt != "" {
		msg += " (reported " + p.report.UpdatedAt + ")"
	}
	return msg
}

// pullStatus is the pull as status.pulls reports it.
func (p *pulledWeights) pullStatus(version string) v1alpha1.PullStatus {
	st := v1alpha1.PullStatus{Version: version, URI: p.model.URI, Job: p.job.Job.Name, State: pullStateName(p.pull)}
	if r := p.report; r != nil {
		st.BytesDone, st.BytesTotal, st.BytesPerSecond = r.Bytes, r.Total, r.Rate
		st.StartedAt, st.UpdatedAt = r.StartedAt, r.UpdatedAt
		if p.pull == jobRunning {
			st.ETASeconds = r.eta()
		}
		st.Progress = r.words()
	}
	return st
}

// pullStateName is a pull's state as status.pulls says it.
func pullStateName(s jobState) string {
	switch s {
	case jobRunning:
		return "Pulling"
	case jobComplete:
		return "Pulled"
	case jobFailed:
		return "Failed"
	default:
		return "Pending"
	}
}

// pullStatuses are status.pulls: one per version whose weights the
// claim pulls itself, when pulls report their progress.
func (p *plan) pullStatuses() []v1alpha1.PullStatus {
	if p.spec.Progress == nil {
		return nil
	}
	var out []v1alpha1.PullStatus
	for _, vp := range p.versions {
		if pw, ok := vp.source.(*pulledWeights); ok {
			out = append(out, pw.pullStatus(vp.Model.Version))
		}
	}
	return out
}

// isProgressConfigMap says a composition resource name is a pull's
// progress ConfigMap, not one of its other progress objects.
func isProgressConfigMap(name string) bool {
	h, ok := strings.CutPrefix(name, resourceProgressPrefix)
	return ok && len(h) == hashLength && !strings.Contains(h, "-")
}
