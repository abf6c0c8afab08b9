//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// --- 29 pull progress --------------------------------------------------------

const (
	// progressPool labels the Composition whose Input turns on pull
	// progress and PodMonitors; it is not the real pool's label value, so
	// claims of the other real-node scenarios never pick it.
	progressPool        = "real-progress"
	progressComposition = "xinferenceservices-real-progress.inference.inferno.io"
	// prometheusOperator is the module whose PodMonitor CRD is installed.
	prometheusOperator = "github.com/prometheus-operator/prometheus-operator@v0.85.0"
	// bigWeights is the size of the weights file, bigRate the origin's
	// pace for it: about 20 s of download.
	bigWeights = int64(200 << 20)
	bigRate    = int64(10 << 20)
)

var podMonitorGVK = schema.GroupVersionKind{Group: "monitoring.coreos.com", Version: "v1", Kind: "PodMonitor"}

// progressSample is the claim's pull as the test saw it once.
type progressSample struct {
	at      time.Duration
	phase   string
	bytes   int64
	total   int64
	message string
}

// pullProgress: a claim whose 200 MiB weights the origin serves at 10
// MiB/s, through a Composition whose Input has pulls report progress and
// renders a PodMonitor. The real pull pod patches its ConfigMap through
// the API server (the `kubernetes` Service, kube-proxy, the bridge), the
// function formats the reports, and the claim's status shows at least
// three distinct progress values before it is Serving. Then: the data the
// pod wrote survived Crossplane's applies, only the pull pod has a token,
// and the PodMonitor's port and path answer with metrics.
func (s *infernoSuite) pullProgress(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "29 pull progress (real node)")
	sc.onRealNode(false)
	if err := env.createTeamNamespace(ctx, realNS); err != nil {
		t.Fatal(err)
	}
	installPodMonitorCRD(ctx, t)
	ensureProgressComposition(ctx, t)
	checkAPIFromNode(ctx, t)
	// Every object the function renders with progress and PodMonitors on
	// (the ConfigMap, ServiceAccount, Role, RoleBinding, PodMonitor, the
	// Job with its projected token), as the real API server takes it.
	strict, err := kube.NewClient(env.admin.Config)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range []string{"progress-fresh.yaml", "progress-pulling.yaml"} {
		for _, g := range goldenObjects(t, f, realNS) {
			if err := applyDryRun(ctx, strict, g.Object); err != nil {
				t.Errorf("%s: %s (%s) refused: %v", f, g.Resource, g.Object.GetKind(), err)
			}
			n++
		}
	}
	warnings := strict.TakeWarnings()
	for _, w := range warnings {
		t.Errorf("API server warning on the rendered objects: %s", w)
	}
	sc.note("%d rendered objects over 2 stages accepted by a strict dry-run apply, %d warnings", n, len(warnings))

	w := publishBigWeights(t, "big-v1", "inferno progress v1", bigWeights)
	env.origin.Throttle("/big-v1/model.markov", bigRate)
	const name = "big"
	c := realClaim(t, name, w.URI, "1", 1)
	setField(c, map[string]any{"cpu": "100m", "memory": "640Mi", "gpu": int64(0)}, "spec", "resources")
	setField(c, map[string]any{"matchLabels": map[string]any{poolLabel: progressPool}}, "spec", "compositionSelector")
	start := time.Now()
	applyClaim(ctx, t, c)
	breaker := breakerStep(ctx, t, sc, realNS, name, "a 200 MiB pull with progress, to Serving")

	var samples []progressSample
	err = kube.Eventually(ctx, 4*time.Minute, 200*time.Millisecond, "claim "+name+" Serving", func(ctx context.Context) (bool, string, error) {
		o, err := env.admin.Get(ctx, claimGVK, realNS, name)
		if err != nil {
			return false, err.Error(), nil
		}
		phase, _, _ := unstructured.NestedString(o.Object, "status", "phase")
		// The report is in status.message and status.pulls; the WeightsReady
		// condition says the same without it (reason.Condition.Detail).
		msg, _, _ := unstructured.NestedString(o.Object, "status", "message")
		pulls, _, _ := unstructured.NestedSlice(o.Object, "status", "pulls")
		smp := progressSample{at: time.Since(start), phase: phase, message: msg}
		if len(pulls) == 1 {
			p, _ := pulls[0].(map[string]any)
			smp.bytes, _ = p["bytesDone"].(int64)
			smp.total, _ = p["bytesTotal"].(int64)
		}
		if n := len(samples); n == 0 || samples[n-1].bytes != smp.bytes || samples[n-1].phase != smp.phase || samples[n-1].message != smp.message {
			samples = append(samples, smp)
		}
		return phase == "Serving", fmt.Sprintf("phase %q: %s", phase, msg), nil
	})
	for _, smp := range samples {
		t.Logf("%6.1fs %-9s %10d/%d %s", smp.at.Seconds(), smp.phase, smp.bytes, smp.total, smp.message)
	}
	if err == nil {
		breaker()
	}
	if err != nil {
		t.Fatalf("%v; the pull's log: %s", err, lastPullLog(ctx, t, name))
	}
	// Distinct values strictly between nothing and everything, each
	// reported while the claim was still Pulling, in both status.pulls and
	// status.message.
	distinct := map[int64]bool{}
	var messages []string
	for _, smp := range samples {
		if smp.phase == "Pulling" && smp.bytes > 0 && smp.bytes < bigWeights {
			distinct[smp.bytes] = true
			if smp.total != bigWeights {
				t.Errorf("status.pulls[0].bytesTotal %d at %.1fs, want %d (the origin's Content-Length)", smp.total, smp.at.Seconds(), bigWeights)
			}
			// status.pulls and status.message come from one write of the
			// function's status; while the WeightsReady condition carried
			// the report, a snapshot could pair this call's bytes with the
			// last call's message (one run: 20 MB beside "no progress
			// report yet"). Such a snapshot is still logged, not failed:
			// the messages that carry a report must name the total, a rate
			// and an ETA, and enough of them must come (below).
			if !strings.Contains(smp.message, " of 200.0 MiB") {
				t.Logf("snapshot at %.1fs pairs %d bytes with the message %q", smp.at.Seconds(), smp.bytes, smp.message)
				continue
			}
			if !strings.Contains(smp.message, "MiB/s") || !strings.Contains(smp.message, "ETA ") {
				t.Errorf("status.message %q lacks \"… of 200.0 MiB, … MiB/s, ETA …\"", smp.message)
			}
			messages = append(messages, smp.message[strings.LastIndex(smp.message, ": ")+2:])
		}
	}
	if len(distinct) < 3 {
		t.Errorf("the claim showed %d distinct progress values before Serving, want at least 3", len(distinct))
	}
	if len(messages) < 3 {
		t.Errorf("status.message reported progress %d times before Serving, want at least 3", len(messages))
	}
	sc.note("200 MiB at 10 MiB/s: %d distinct progress values while Pulling, Serving after %.1fs; e.g. %q", len(distinct), time.Since(start).Seconds(), firstOf(messages))

	// The ConfigMap: its data is the pull pod's, and Crossplane's applies
	// (one per report at least) left it there.
	cms, err := env.admin.Typed.CoreV1().ConfigMaps(realNS).List(ctx, metav1.ListOptions{LabelSelector: instanceLabel + "=" + name})
	if err != nil || len(cms.Items) != 1 {
		t.Fatalf("progress ConfigMaps of %s: %v (%d)", name, err, len(cms.Items))
	}
	cm := cms.Items[0]
	if cm.Data["bytes"] != fmt.Sprint(bigWeights) || cm.Data["total"] != fmt.Sprint(bigWeights) {
		t.Errorf("ConfigMap %s data %v, want the pod's last report of %d bytes", cm.Name, cm.Data, bigWeights)
	}
	var managers []string
	for _, f := range cm.ManagedFields {
		managers = append(managers, fmt.Sprintf("%s/%s", f.Manager, f.Operation))
	}
	sc.note("ConfigMap %s after Serving: data %v; field managers %v", cm.Name, cm.Data, managers)

	// Only the pull pod had a token: the servers have none.
	for _, p := range claimServerPods(ctx, t, realNS, name) {
		for _, v := range p.Spec.Volumes {
			if v.Projected != nil {
				t.Errorf("server pod %s has a projected volume %s", p.Name, v.Name)
			}
		}
	}

	// The PodMonitor as the API server kept it: nothing the function
	// rendered was pruned, and its endpoint answers with the server's
	// metrics.
	pm, err := env.admin.Get(ctx, podMonitorGVK, realNS, name)
	if err != nil {
		t.Fatal(err)
	}
	eps, _, _ := unstructured.NestedSlice(pm.Object, "spec", "podMetricsEndpoints")
	targets, _, _ := unstructured.NestedStringSlice(pm.Object, "spec", "podTargetLabels")
	exprs, _, _ := unstructured.NestedSlice(pm.Object, "spec", "selector", "matchExpressions")
	if len(eps) != 1 || len(targets) != 1 || len(exprs) != 1 {
		t.Fatalf("PodMonitor %s as stored: %v", name, pm.Object["spec"])
	}
	ep, _ := eps[0].(map[string]any)
	port, _ := ep["portNumber"].(int64)
	path, _ := ep["path"].(string)
	pods := claimServerPods(ctx, t, realNS, name)
	if len(pods) != 1 || port == 0 || path == "" {
		t.Fatalf("%d server pods, PodMonitor port %d path %q", len(pods), port, path)
	}
	url := fmt.Sprintf("http://%s:%d%s", pods[0].Status.PodIP, port, path)
	body, err := scrapeURL(ctx, url)
	if err != nil || !strings.Contains(body, "inferno_fake_requests_running") {
		t.Errorf("GET %s: %v; %.200q", url, err, body)
	}
	waitClaimsReady(ctx, t, realNS, []string{name}, 2*time.Minute)
	sc.note("PodMonitor %s: port %d path %s answers with the server's metrics; claim Ready (PodMonitor ready once observed)", name, port, path)
}

// checkAPIFromNode says how the real node reaches the API server: the
// `kubernetes` Service's endpoints, the forwarder on the bridge, and the
// Service's ClusterIP through kube-proxy's rules, from the host. (Pods
// take the same rules once they have a route to the Service range: the
// node's CNI routes it through the bridge, see realnode.Options.)
func checkAPIFromNode(ctx context.Context, t *testing.T) {
	t.Helper()
	slices, err := env.admin.Typed.DiscoveryV1().EndpointSlices("default").List(ctx, metav1.ListOptions{LabelSelector: "kubernetes.io/service-name=kubernetes"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			t.Logf("kubernetes EndpointSlice %s: %v ready=%v ports %v", s.Name, e.Addresses, e.Conditions.Ready != nil && *e.Conditions.Ready, portsOf(s.Ports))
		}
	}
	for _, addr := range []string{net.JoinHostPort(realBridgeIP(), fmt.Sprint(env.cp.APIPort)), "10.0.0.1:443"} {
		err := kube.Eventually(ctx, 30*time.Second, 500*time.Millisecond, "a TCP connection to "+addr, func(ctx context.Context) (bool, string, error) {
			c, err := net.DialTimeout("tcp", addr, 2*time.Second)
			if err != nil {
				return false, err.Error(), nil
			}
			c.Close()
			return true, "", nil
		})
		if err != nil {
			out, _ := exec.Command("iptables-save", "-t", "nat").CombinedOutput()
			var lines []string
			for _, l := range strings.Split(string(out), "\n") {
				if strings.Contains(l, "default/kubernetes") {
					lines = append(lines, l)
				}
			}
			t.Fatalf("%v; kube-proxy's rules for the kubernetes Service:\n%s", err, strings.Join(lines, "\n"))
		}
	}
}

func portsOf(ps []discoveryv1.EndpointPort) []int32 {
	var out []int32
	for _, p := range ps {
		if p.Port != nil {
			out = append(out, *p.Port)
		}
	}
	return out
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[len(s)/2]
}

func scrapeURL(ctx context.Context, url string) (string, error) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	resp, err := noProxy.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return string(b), fmt.Errorf("%s", resp.Status)
	}
	return string(b), nil
}

// lastPullLog is the log of the claim's pull Job, for a failure message.
func lastPullLog(ctx context.Context, t *testing.T, claim string) string {
	jobs := pullJobs(ctx, t, realNS, claim)
	if len(jobs) == 0 {
		return "(no pull Job)"
	}
	return jobLogs(ctx, realNS, jobs[0].Name)
}

// publishBigWeights writes weights of about size bytes: a real table
// made from seed, padded with comment lines (which the fake server skips),
// so the server still answers from it.
func publishBigWeights(t *testing.T, name, seed string, size int64) weightsSet {
	t.Helper()
	w := publishWeights(t, name, seed)
	path := filepath.Join(w.Dir, "model.markov")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	line := "# " + strings.Repeat("padding ", 127) + "\n" // 1 KiB
	left := size - st.Size()
	chunk := strings.Repeat(line, 1024)
	for left >= int64(len(chunk)) {
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
		left -= int64(len(chunk))
	}
	if _, err := f.WriteString(strings.Repeat("#", int(max(0, left-1))) + "\n"); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() != size {
		t.Fatalf("%s is %d bytes, want %d", path, st.Size(), size)
	}
	return w
}

// installPodMonitorCRD applies the Prometheus Operator's PodMonitor CRD
// from its module at a pinned version and waits until it is established.
// The operator itself is not run: no Prometheus scrapes here. The test
// scrapes the endpoint the PodMonitor names instead.
func installPodMonitorCRD(ctx context.Context, t *testing.T) {
	t.Helper()
	out, err := exec.Command("go", "mod", "download", "-json", prometheusOperator).Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v", prometheusOperator, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		t.Fatalf("go mod download %s: %v %s", prometheusOperator, err, out)
	}
	applyCRDFile(ctx, t, filepath.Join(mod.Dir, "example", "prometheus-operator-crd", "monitoring.coreos.com_podmonitors.yaml"))
}

// ensureProgressComposition is the real-node Composition with an Input
// that turns on pull progress (every 2 s) and PodMonitors.
func ensureProgressComposition(ctx context.Context, t *testing.T) {
	t.Helper()
	input := realNodeInput()
	input["pullProgress"] = map[string]any{"enabled": true, "intervalSeconds": int64(2)}
	input["monitoring"] = map[string]any{"podMonitor": map[string]any{"enabled": true, "interval": "15s", "labels": map[string]any{"release": "prometheus"}}}
	applyComposition(ctx, t, "composition.yaml", progressComposition, progressPool, input)
}
