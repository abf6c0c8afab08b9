//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/inferno-ai/function-inferno/test/e2e/gguf"
	"github.com/inferno-ai/function-inferno/test/e2e/kube"
)

// httpAddOnModuleDir is the tools module that pins KEDA's HTTP add-on
// (v0.12.0); its binaries are in bin/keda-http-add-on.
const httpAddOnModuleDir = "tools/e2e/httpaddon"

// The add-on's release (config/default: namespace keda, name prefix
// keda-add-ons-http-) names its ServiceAccounts, roles and Services so.
const (
	httpAddOnPrefix = "keda-add-ons-http-"
	// interceptorAdmin is the interceptors' admin Service, whose
	// EndpointSlices the scaler reads to find every interceptor and ask it
	// for its queue; interceptorDeployment the Deployment the scaler
	// watches the slices of for interceptors coming and going.
	interceptorAdmin      = httpAddOnPrefix + "interceptor-admin"
	interceptorDeployment = httpAddOnPrefix + "interceptor"
	// externalScaler is the scaler's Service; the operator names it in
	// the ScaledObjects it makes (none here: the function's
	// HTTPScaledObject tells it not to).
	externalScaler = httpAddOnPrefix + "external-scaler"
)

// liveHTTPAddOn is KEDA's HTTP add-on (bin/keda-http-add-on, built from
// tools/e2e/httpaddon) run on the host the way its release deploys it, less
// the Deployments: operator, external scaler and interceptor each as its
// own ServiceAccount (keda/keda-add-ons-http-<component>) bound to the
// module's own roles (config/<component>/role.yaml), with the release's
// environment. What the cluster would give their pods the test gives them
// instead:
//   - the interceptors' admin Service is a headless Service without a
//     selector whose one EndpointSlice is the node's address on the
//     bridge (the interceptor listens on every address; an EndpointSlice
//     may not hold 127.0.0.1), so the scaler finds the interceptor as it
//     finds its pods;
//   - KEDA reaches the scaler on 127.0.0.1, through the Input's
//     input.keda.httpAddOn.scalerAddress;
//   - the interceptor forwards to <service>.<namespace>:<port>, a name
//     cluster DNS would resolve; there is none here, so it runs in a mount
//     namespace of its own whose /etc/hosts (a bind mount of a file of the
//     test's) maps that name to the Service's ClusterIP, which kube-proxy
//     programs on the host. The host's /etc/hosts is not touched.
type liveHTTPAddOn struct {
	operator, scaler, interceptor *hostController
	// ScalerAddress is the scaler's gRPC address, host:port.
	ScalerAddress string
	// Proxy is the interceptor's proxy, http://127.0.0.1:port.
	Proxy     string
	adminPort string
	dir       string
}

// httpAddOnBinary is one of the add-on's three programs.
func httpAddOnBinary(t *testing.T, name string) string {
	t.Helper()
	bin := filepath.Join(binDir(), "keda-http-add-on", name)
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("no %s: make e2e-tools builds it (tools/e2e/httpaddon)", bin)
	}
	return bin
}

// startHTTPAddOn installs the add-on's CRD from its pinned module and
// starts its operator and scaler; the interceptor starts later
// (startInterceptor), once the Service it forwards to exists. KEDA's
// operator must run (its namespace and CRDs).
func startHTTPAddOn(ctx context.Context, t *testing.T) *liveHTTPAddOn {
	t.Helper()
	module := moduleDir(t, "github.com/kedacore/http-add-on", httpAddOnModuleDir)
	// Scenario 26 installed the same CRD and deleted it as it ended.
	waitCRDGone(ctx, t, "httpscaledobjects.http.keda.sh")
	crd := applyCRDFile(ctx, t, filepath.Join(module, "config", "crd", "bases", "http.keda.sh_httpscaledobjects.yaml"))
	t.Cleanup(func() {
		if err := env.admin.Delete(context.Background(), crdGVK, "", crd); err != nil && !apierrors.IsNotFound(err) {
			t.Logf("deleting CRD %s: %v", crd, err)
		}
	})
	a := &liveHTTPAddOn{dir: filepath.Join(env.workDir, "keda-http-add-on"), adminPort: freePort(t)}

	// The operator: leader election off (one of it), its metrics on
	// loopback without the auth filter the release turns on (the
	// auth-delegator binding is for that filter alone).
	opDir := filepath.Join(a.dir, "operator")
	probePort := freePort(t)
	a.operator = startHTTPAddOnComponent(ctx, t, module, opDir, "operator", "operator", httpAddOnBinary(t, "operator"), []string{
		"--leader-elect=false",
		"--metrics-bind-address=127.0.0.1:" + freePort(t),
		"--health-probe-bind-address=127.0.0.1:" + probePort,
		"--zap-encoder=console",
		"--zap-time-encoding=rfc3339",
	}, []string{
		"KEDAHTTP_OPERATOR_EXTERNAL_SCALER_SERVICE=" + externalScaler,
		"KEDAHTTP_OPERATOR_EXTERNAL_SCALER_PORT=9090",
		"KEDA_HTTP_OPERATOR_NAMESPACE=" + kedaNamespace,
		"KEDA_HTTP_OPERATOR_WATCH_NAMESPACE=",
	})
	a.operator.waitReady(ctx, t, "http://127.0.0.1:"+probePort+"/readyz")

	// The scaler: gRPC on every address (it has no flag for one), which
	// KEDA dials on 127.0.0.1.
	grpcPort := freePort(t)
	a.ScalerAddress = "127.0.0.1:" + grpcPort
	a.scaler = startHTTPAddOnComponent(ctx, t, module, filepath.Join(a.dir, "scaler"), "scaler", "scaler", httpAddOnBinary(t, "scaler"), []string{
		"--zap-encoder=console",
		"--zap-time-encoding=rfc3339",
	}, []string{
		"KEDA_HTTP_SCALER_PORT=" + grpcPort,
		"KEDA_HTTP_SCALER_TARGET_ADMIN_NAMESPACE=" + kedaNamespace,
		"KEDA_HTTP_SCALER_TARGET_ADMIN_SERVICE=" + interceptorAdmin,
		"KEDA_HTTP_SCALER_TARGET_ADMIN_DEPLOYMENT=" + interceptorDeployment,
		"KEDA_HTTP_SCALER_TARGET_ADMIN_PORT=" + a.adminPort,
		"KEDA_HTTP_SCALER_STREAM_INTERVAL_MS=200",
	})
	waitFor(ctx, t, time.Minute, "the add-on's scaler listening on "+a.ScalerAddress, func(context.Context) (bool, string, error) {
		select {
		case <-a.scaler.exited:
			return false, "", fmt.Errorf("the scaler exited: %s", tail(a.scaler.log, 5))
		default:
		}
		c, err := net.DialTimeout("tcp", a.ScalerAddress, time.Second)
		if err != nil {
			return false, err.Error(), nil
		}
		c.Close()
		return true, "", nil
	})
	return a
}

// startHTTPAddOnComponent gives one of the add-on's programs its release
// identity (ServiceAccount keda-add-ons-http-<sa> bound to the roles of
// config/<component>/role.yaml, prefixed as the release's kustomization
// prefixes them) and runs it with a kubeconfig of that account's token.
func startHTTPAddOnComponent(ctx context.Context, t *testing.T, module, dir, component, sa, bin string, args, environ []string) *hostController {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sa = httpAddOnPrefix + sa
	controllerIdentity(ctx, t, kedaNamespace, sa, filepath.Join(module, "config", component, "role.yaml"), httpAddOnPrefix)
	kubeconfig := serviceAccountKubeconfig(ctx, t, dir, kedaNamespace, sa)
	// Never through a proxy of the environment (the interceptor's
	// transport honours one): only loopback and the bridge.
	environ = append(environ, "KUBECONFIG="+kubeconfig, "NO_PROXY=*", "no_proxy=*")
	return startHostController(t, "keda-http-"+component, bin, args, environ)
}

// startInterceptor starts the interceptor in a mount namespace of its own
// whose /etc/hosts maps each of names (<service>.<namespace>, as it
// forwards) to its address, registers it behind the admin Service, and
// waits until its routing table has synced and the scaler reads its queue.
func (a *liveHTTPAddOn) startInterceptor(ctx context.Context, t *testing.T, module string, names map[string]string) {
	t.Helper()
	dir := filepath.Join(a.dir, "interceptor")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	hosts := "127.0.0.1 localhost\n"
	for _, n := range slices.Sorted(maps.Keys(names)) {
		hosts += names[n] + " " + n + "\n"
	}
	hostsFile := filepath.Join(dir, "hosts")
	if err := os.WriteFile(hostsFile, []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	proxyPort := freePort(t)
	a.Proxy = "http://127.0.0.1:" + proxyPort
	// unshare execs sh in a new mount namespace (slave: the host's mounts
	// and unmounts still reach it, its own do not leave it), which binds
	// the file over /etc/hosts there and execs the interceptor: one
	// process throughout, which the scenario's cleanup interrupts.
	args := []string{"--mount", "--propagation", "slave", "sh", "-c", `mount --bind "$0" /etc/hosts && exec "$@"`, hostsFile,
		httpAddOnBinary(t, "interceptor"), "--zap-encoder=console", "--zap-time-encoding=rfc3339"}
	// The release's environment (config/interceptor/deployment.yaml), its
	// metrics exporter off (nothing scrapes it) and every request logged.
	environ := []string{
		"KEDA_HTTP_CURRENT_NAMESPACE=" + kedaNamespace,
		"KEDA_HTTP_PROXY_PORT=" + proxyPort,
		"KEDA_HTTP_ADMIN_PORT=" + a.adminPort,
		"KEDA_HTTP_CONNECT_TIMEOUT=500ms",
		"KEDA_HTTP_KEEP_ALIVE=1s",
		"KEDA_RESPONSE_HEADER_TIMEOUT=500ms",
		"KEDA_CONDITION_WAIT_TIMEOUT=20s",
		"KEDA_HTTP_ENDPOINTS_CACHE_POLLING_INTERVAL_MS=1000",
		"KEDA_HTTP_FORCE_HTTP2=false",
		"KEDA_HTTP_MAX_IDLE_CONNS=100",
		"KEDA_HTTP_IDLE_CONN_TIMEOUT=90s",
		"KEDA_HTTP_TLS_HANDSHAKE_TIMEOUT=10s",
		"KEDA_HTTP_EXPECT_CONTINUE_TIMEOUT=1s",
		"OTEL_PROM_EXPORTER_ENABLED=false",
		"KEDA_HTTP_LOG_REQUESTS=true",
	}
	unshare := "/usr/bin/unshare"
	a.interceptor = startHTTPAddOnComponent(ctx, t, module, dir, "interceptor", "interceptor", unshare, args, environ)

	// The admin Service and the interceptor's "pod": the node's address.
	c := env.admin.Typed
	port, _ := strconv.Atoi(a.adminPort)
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: interceptorAdmin, Namespace: kedaNamespace},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone, Ports: []corev1.ServicePort{{Name: "admin", Port: int32(port), Protocol: corev1.ProtocolTCP}}},
	}
	if _, err := c.CoreV1().Services(kedaNamespace).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	slice := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Name: interceptorAdmin + "-host", Namespace: kedaNamespace, Labels: map[string]string{
			discoveryv1.LabelServiceName: interceptorAdmin,
			discoveryv1.LabelManagedBy:   "e2e.inferno.io",
		}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{env.node.IP}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}},
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("admin"), Port: ptr.To(int32(port)), Protocol: ptr.To(corev1.ProtocolTCP)}},
	}
	if _, err := c.DiscoveryV1().EndpointSlices(kedaNamespace).Create(ctx, slice, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// Ready: its admin server answers, its proxy's probe (which answers
	// kube-probe's user agent on a host it does not route) says the
	// routing table has synced, and the scaler's gRPC health says its
	// pinger reads the interceptor's queue.
	a.interceptor.waitReady(ctx, t, "http://"+net.JoinHostPort(env.node.IP, a.adminPort)+"/queue", func() (bool, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, a.Proxy+"/readyz", nil)
		req.Header.Set("User-Agent", "kube-probe/1.35")
		resp, err := noProxy.Do(req)
		if err != nil {
			return false, err.Error()
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, "proxy readyz " + resp.Status
	}, a.scalerServing(ctx))
}

// scalerServing asks the scaler's gRPC health service for "readiness",
// which is SERVING while its pinger reads every interceptor's queue.
func (a *liveHTTPAddOn) scalerServing(ctx context.Context) func() (bool, string) {
	return func() (bool, string) {
		conn, err := grpc.NewClient(a.ScalerAddress, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return false, err.Error()
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		r, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: "readiness"})
		if err != nil {
			return false, "scaler health: " + err.Error()
		}
		return r.Status == healthpb.HealthCheckResponse_SERVING, "scaler readiness " + r.Status.String()
	}
}

// refusals are what the API server refused any of the add-on's programs.
func (a *liveHTTPAddOn) refusals() []string {
	var out []string
	for _, h := range []*hostController{a.operator, a.scaler, a.interceptor} {
		if h != nil {
			out = append(out, h.refusals()...)
		}
	}
	return out
}

// --- 26c scale from zero through the HTTP add-on (real node) ---------------

// httpAddOnPool labels the Composition of scenario 26c: the real node's
// Input with KEDA and its HTTP add-on.
const httpAddOnPool = "real-keda-http"

// heldRequests is how many requests scenario 26c sends at once to the
// service at zero.
const heldRequests = 5

// scaleFromZeroHTTP is fromZeroThroughAddOn for llama.cpp.
//
// fromZeroThroughAddOn: a claim of the runtime with replicas.min 0 on the
// real node, under KEDA's real operator (v2.17.0) and the HTTP add-on's
// real operator, scaler and interceptor (v0.12.0), with the Prometheus the
// test plays answering 0 throughout, so only the add-on can wake it:
//  1. the add-on's operator marks the function's HTTPScaledObject Ready
//     and makes no ScaledObject of its own; KEDA makes the function's
//     ScaledObject, with the add-on's external-push trigger, Ready; with
//     nothing in flight it scales the Deployment to 0 and the claim is
//     Idle and Ready;
//  2. heldRequests completions sent at once to the interceptor, with the
//     Service's DNS name as Host, are held while KEDA (told by the scaler,
//     which reads the interceptor's queue) starts a server, and all are
//     answered by the server with the text it gives through the
//     Service; the interceptor says each was a cold start; the claim went
//     Idle → Serving (a watch);
//  3. deleting the claim passes both operators' finalizers; the API server
//     refused none of the four programs anything.
func (s *infernoSuite) scaleFromZeroHTTP(t *testing.T) {
	fromZeroThroughAddOn(t, fromZero{
		title: "26c scale from zero through KEDA's HTTP add-on v0.12.0 (real node, llama.cpp)",
		need:  needLlamaServer, framework: "llamacpp", image: llamaServerImage,
		name: "drowsy", gguf: "llama-tiny/tiny-llama.gguf",
		claim: llamaClaim, path: "/v1/completions",
		body: map[string]any{"prompt": prompt, "max_tokens": maxTokens, "temperature": 0},
	})
}

// scaleOllamaFromZero is 26c for framework: ollama, which exports no
// concurrency metric: the function's ScaledObject has the add-on's
// external-push trigger alone, and the interceptor's count of the held
// requests is all that wakes it. Clients send the claim's name as "model"
// (the name the preset's start script gives the model in Ollama's store).
func (s *infernoSuite) scaleOllamaFromZero(t *testing.T) {
	const name = "sleepy-ollama"
	fromZeroThroughAddOn(t, fromZero{
		title: "36b Ollama from zero through KEDA's HTTP add-on v0.12.0 (real node, no concurrency metric)",
		need:  needOllama, framework: "ollama", image: ollamaServerImage,
		name: name, gguf: "ollama-zero/tiny-llama.gguf",
		claim: ollamaClaim, path: "/v1/chat/completions",
		body: ollamaOpenAIChat(name),
		check: func(t *testing.T, so *unstructured.Unstructured) {
			triggers, _, _ := unstructured.NestedSlice(so.Object, "spec", "triggers")
			if len(triggers) != 1 || triggers[0].(map[string]any)["type"] != "external-push" {
				t.Errorf("Ollama's ScaledObject triggers %v, want the add-on's external-push alone", triggers)
			}
		},
	})
}

// fromZero is one runtime's part of the scale-from-zero scenario.
type fromZero struct {
	title, framework, image, name, gguf, path string
	need                                      func(t *testing.T)
	claim                                     func(t *testing.T, name, uri, version string) *unstructured.Unstructured
	body                                      map[string]any
	// check, when set, judges the ScaledObject KEDA made Ready.
	check func(t *testing.T, so *unstructured.Unstructured)
}

func fromZeroThroughAddOn(t *testing.T, z fromZero) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, z.title)
	sc.onRealNode(false)
	z.need(t)
	// 26b's KEDA namespace goes as it ends; wait until it is gone.
	waitFor(ctx, t, 2*time.Minute, "namespace "+kedaNamespace+" gone", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Typed.CoreV1().Namespaces().Get(ctx, kedaNamespace, metav1.GetOptions{})
		return apierrors.IsNotFound(err), fmt.Sprint(err), nil
	})
	prom := startFakePrometheus(t)
	prom.set(0)
	at := time.Now()
	keda := startKEDA(ctx, t)
	addOn := startHTTPAddOn(ctx, t)
	sc.note("KEDA's operator v2.17.0, the add-on's operator and scaler v0.12.0 and their CRDs up in %.1fs", time.Since(at).Seconds())

	if err := env.createTeamNamespace(ctx, realNS); err != nil {
		t.Fatal(err)
	}
	input := realNodeInput()
	input["runtimes"] = map[string]any{z.framework: map[string]any{"image": z.image}}
	input["keda"] = map[string]any{
		"enabled": true, "prometheusAddress": prom.URL, "cooldownPeriod": int64(30), "pollingInterval": int64(2),
		"httpAddOn": map[string]any{"enabled": true, "scalerAddress": addOn.ScalerAddress},
	}
	const comp = "xinferenceservices-real-keda-http.inference.inferno.io"
	applyComposition(ctx, t, "composition.yaml", comp, httpAddOnPool, input)
	t.Cleanup(func() { _ = env.admin.Delete(context.Background(), compositionGVK, "", comp) })

	uri, _ := publishGGUF(t, z.gguf, gguf.TinyLlama(1))
	name := z.name
	claim := z.claim(t, name, uri, "1")
	setField(claim, map[string]any{"matchLabels": map[string]any{poolLabel: httpAddOnPool}}, "spec", "compositionSelector")
	setField(claim, map[string]any{"min": int64(0), "max": int64(2)}, "spec", "replicas")
	setField(claim, map[string]any{"enabled": true, "targetConcurrency": int64(1)}, "spec", "autoscaling")
	start := time.Now()
	applyClaim(ctx, t, claim)
	// Before the operators stop (cleanups run last first): their
	// finalizers must pass, or the CRDs' deletion would wait on them.
	t.Cleanup(func() {
		ctx := context.Background()
		if err := env.admin.Delete(ctx, claimGVK, realNS, name); apierrors.IsNotFound(err) {
			return
		}
		_ = kube.Eventually(ctx, time.Minute, 250*time.Millisecond, "the claim's KEDA objects gone", func(ctx context.Context) (bool, string, error) {
			_, err := env.admin.Get(ctx, httpScaledObjectGVK, realNS, name)
			_, serr := env.admin.Get(ctx, scaledObjectGVK, realNS, name)
			return apierrors.IsNotFound(err) && apierrors.IsNotFound(serr), "", nil
		})
	})
	waitServiceURL(ctx, t, realNS, name, 3*time.Minute)

	// 1. Both operators accept their objects; KEDA takes it to 0; Idle.
	var hso *unstructured.Unstructured
	waitFor(ctx, t, 3*time.Minute, "the add-on's operator: the HTTPScaledObject Ready", func(ctx context.Context) (bool, string, error) {
		var err error
		if hso, err = env.admin.Get(ctx, httpScaledObjectGVK, realNS, name); err != nil {
			return false, err.Error(), nil
		}
		st, reason, _ := kube.Condition(hso, "Ready")
		return st == "True" && reason == "Reconciled", kube.ConditionsSummary(hso), nil
	})
	if !slices.Contains(hso.GetFinalizers(), "httpscaledobject.http.keda.sh") {
		t.Errorf("the add-on's operator did not put its finalizer on the HTTPScaledObject: %v", hso.GetFinalizers())
	}
	var so *unstructured.Unstructured
	waitFor(ctx, t, time.Minute, "KEDA: the ScaledObject Ready", func(ctx context.Context) (bool, string, error) {
		var err error
		if so, err = env.admin.Get(ctx, scaledObjectGVK, realNS, name); err != nil {
			return false, err.Error(), nil
		}
		ready, _, _ := kube.Condition(so, "Ready")
		return ready == "True", kube.ConditionsSummary(so), nil
	})
	if z.check != nil {
		z.check(t, so)
	}
	// The function's ScaledObject alone: none made or owned by the add-on.
	all, err := env.admin.List(ctx, scaledObjectGVK, realNS, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, so := range all {
		for _, o := range so.GetOwnerReferences() {
			if o.Kind == "HTTPScaledObject" {
				t.Errorf("ScaledObject %s is owned by HTTPScaledObject %s: the add-on made its own", so.GetName(), o.Name)
			}
		}
	}
	if len(all) != 1 || all[0].GetLabels()[instanceLabel] != name {
		t.Errorf("%d ScaledObjects in %s: want the function's alone (the add-on must make none)", len(all), realNS)
	}
	waitReplicas(ctx, t, realNS, name, 0, 3*time.Minute)
	idle := waitPhase(ctx, t, realNS, name, "Idle", "True")
	msg, _, _ := unstructured.NestedString(idle.Object, "status", "message")
	sc.note("apply → HTTPScaledObject Ready (the add-on's operator), ScaledObject Ready (KEDA), scaled to 0, Idle and Ready in %.1fs: %s", time.Since(start).Seconds(), msg)

	// 2. The interceptor, then requests through it.
	svc, err := env.admin.Typed.CoreV1().Services(realNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	module := moduleDir(t, "github.com/kedacore/http-add-on", httpAddOnModuleDir)
	at = time.Now()
	addOn.startInterceptor(ctx, t, module, map[string]string{name + "." + realNS: svc.Spec.ClusterIP})
	sc.note("interceptor up, its routes synced and its queue read by the scaler in %.1fs", time.Since(at).Seconds())
	if n := serverPods(ctx, t, realNS, name); sum(n) != 0 {
		t.Fatalf("before the requests: %v server pods, want none", n)
	}

	phases := watchPhases(ctx, t, realNS, name)
	scaled, served := watchDeploymentUp(ctx, t, realNS, name)
	host := name + "." + realNS + ".svc.cluster.local"
	body := z.body
	type answer struct {
		text, coldStart string
		took            time.Duration
		err             error
	}
	answers := make([]answer, heldRequests)
	var wg sync.WaitGroup
	start = time.Now()
	for i := range answers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t0 := time.Now()
			text, cold, err := askThrough(ctx, addOn.Proxy+z.path, host, body, 3*time.Minute)
			answers[i] = answer{text: text, coldStart: cold, took: time.Since(t0), err: err}
		}()
	}
	wg.Wait()
	all0 := time.Since(start)
	seen := phases.stop()
	var failed []string
	var slowest, fastest time.Duration
	for i, a := range answers {
		if a.err != nil {
			failed = append(failed, fmt.Sprintf("request %d after %s: %v", i, a.took.Round(time.Millisecond), a.err))
			continue
		}
		if fastest == 0 || a.took < fastest {
			fastest = a.took
		}
		slowest = max(slowest, a.took)
		if a.coldStart != "true" {
			t.Errorf("request %d: X-KEDA-HTTP-Cold-Start %q, want true: the interceptor did not hold it for a server", i, a.coldStart)
		}
	}
	since := func(at func() time.Time) string {
		if when := at(); !when.IsZero() {
			return fmt.Sprintf("%.1fs", when.Sub(start).Seconds())
		}
		return "never"
	}
	sc.note("%d requests sent at once through the interceptor to the service at zero: %d failed; KEDA scaled the Deployment to 1 after %s, its server was ready after %s, the requests were answered in %s–%s (all %.1fs); the claim went %s",
		heldRequests, len(failed), since(scaled), since(served), fastest.Round(100*time.Millisecond), slowest.Round(100*time.Millisecond), all0.Seconds(), strings.Join(seen, " → "))
	bad, stayed := notRewritten(svc.Spec.ClusterIP)
	if len(bad) > 0 {
		t.Errorf("connections to the ClusterIP %s were answered by something other than a pod (not rewritten by kube-proxy; off the bridge?): %s", svc.Spec.ClusterIP, strings.Join(bad, "; "))
	}
	if stayed > 0 {
		sc.note("%d connections of the interceptor's met kube-proxy between its REJECT and its DNAT, stayed on the bridge unanswered, and were dialled again", stayed)
	}
	if len(failed) > 0 {
		t.Errorf("%d of %d held requests failed: %s; the interceptor's log: %s; the server's endpoints %s, its log:\n%s",
			len(failed), heldRequests, strings.Join(failed, "; "), tail(addOn.interceptor.log, 8), endpointsOf(ctx, realNS, name), serverLog(ctx, t, realNS, name))
	}
	if len(seen) < 2 || seen[0] != "Idle" || seen[len(seen)-1] != "Serving" {
		t.Errorf("the claim's phases from the requests on: %v, want Idle first and Serving last", seen)
	}
	// The same text the server gives through its Service.
	direct, err := llamaAsk(ctx, serviceURL(ctx, t, realNS, name)+z.path, body)
	if err != nil {
		t.Fatalf("through the Service %s: %v; its endpoints %s", serviceURL(ctx, t, realNS, name), err, endpointsOf(ctx, realNS, name))
	}
	for i, a := range answers {
		if a.err == nil && a.text != direct {
			t.Errorf("request %d through the interceptor answered %q; through the Service %q", i, a.text, direct)
		}
	}
	if strings.TrimSpace(direct) == "" {
		t.Errorf("the %s server answered an empty completion", z.framework)
	}
	d, err := env.admin.Typed.AppsV1().Deployments(realNS).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc.note("woken by the add-on alone (the test's Prometheus answered 0 throughout): Deployment at %d, answer %q", ptr.Deref(d.Spec.Replicas, -1), direct)
	waitPhase(ctx, t, realNS, name, "Serving", "True")

	// 3. Deleted while the operators run: their finalizers pass.
	deleteClaimsAndWait(ctx, t, realNS, []string{name})
	waitFor(ctx, t, time.Minute, "the HTTPScaledObject and ScaledObject gone with the claim", func(ctx context.Context) (bool, string, error) {
		_, err := env.admin.Get(ctx, httpScaledObjectGVK, realNS, name)
		_, serr := env.admin.Get(ctx, scaledObjectGVK, realNS, name)
		return apierrors.IsNotFound(err) && apierrors.IsNotFound(serr), fmt.Sprint(err, serr), nil
	})
	if r := append(keda.refusals(), addOn.refusals()...); len(r) > 0 {
		t.Errorf("the API server refused KEDA or the add-on (their roles) %d times, first: %s", len(r), r[0])
	}
}

// askThrough posts an OpenAI request to url with host as the Host header
// (the interceptor routes by it), waiting up to timeout for a server to
// wake, and returns the first choice's text and the interceptor's
// X-KEDA-HTTP-Cold-Start header.
func askThrough(ctx context.Context, url, host string, body map[string]any, timeout time.Duration) (string, string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// noProxy's 5 s would end a request held for a cold start.
	held := &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}
	text, h, err := llamaPost(ctx, held, url, host, body)
	return text, h.Get("X-KEDA-HTTP-Cold-Start"), err
}

// phaseWatch records a claim's status.phase as it changes, from a watch:
// every phase the API server stored, not samples.
type phaseWatch struct {
	mu     sync.Mutex
	seen   []string
	cancel context.CancelFunc
	done   chan struct{}
}

// watchPhases starts recording the claim's phases, beginning with the
// current one.
func watchPhases(ctx context.Context, t *testing.T, ns, name string) *phaseWatch {
	t.Helper()
	res, err := env.admin.Resource(claimGVK, ns)
	if err != nil {
		t.Fatal(err)
	}
	c, err := res.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := res.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: c.GetResourceVersion()})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	p := &phaseWatch{cancel: cancel, done: make(chan struct{})}
	p.record(c)
	go func() {
		defer close(p.done)
		defer w.Stop()
		for ev := range w.ResultChan() {
			if o, ok := ev.Object.(*unstructured.Unstructured); ok {
				p.record(o)
			}
		}
	}()
	return p
}

func (p *phaseWatch) record(o *unstructured.Unstructured) {
	phase, _, _ := unstructured.NestedString(o.Object, "status", "phase")
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.seen); n == 0 || p.seen[n-1] != phase {
		p.seen = append(p.seen, phase)
	}
}

// stop ends the watch once the claim is Serving (or after a minute) and
// returns the phases seen.
func (p *phaseWatch) stop() []string {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		last := ""
		if n := len(p.seen); n > 0 {
			last = p.seen[n-1]
		}
		p.mu.Unlock()
		if last == "Serving" {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.cancel()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.seen)
}

// watchDeploymentUp watches the Deployment from now on and returns when
// it first asked for a server (KEDA scaled it) and when it first had a
// ready one, zero until then.
func watchDeploymentUp(ctx context.Context, t *testing.T, ns, name string) (scaled, ready func() time.Time) {
	t.Helper()
	d, err := env.admin.Typed.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(ctx)
	w, err := env.admin.Typed.AppsV1().Deployments(ns).Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + name, ResourceVersion: d.ResourceVersion})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(cancel)
	var mu sync.Mutex
	var up, served time.Time
	go func() {
		defer w.Stop()
		for ev := range w.ResultChan() {
			d, ok := ev.Object.(*appsv1.Deployment)
			if !ok {
				continue
			}
			now := time.Now()
			mu.Lock()
			if up.IsZero() && ptr.Deref(d.Spec.Replicas, 0) > 0 {
				up = now
			}
			if served.IsZero() && d.Status.ReadyReplicas > 0 {
				served = now
			}
			mu.Unlock()
		}
	}()
	at := func(p *time.Time) func() time.Time {
		return func() time.Time { mu.Lock(); defer mu.Unlock(); return *p }
	}
	return at(&up), at(&served)
}

// endpointsOf lists a Service's endpoints (address, ready, pod), and the
// pods of the namespace with their addresses, for failure messages.
func endpointsOf(ctx context.Context, ns, svc string) string {
	var out []string
	l, err := env.admin.Typed.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svc})
	if err != nil {
		return err.Error()
	}
	for _, s := range l.Items {
		for _, e := range s.Endpoints {
			pod := ""
			if e.TargetRef != nil {
				pod = e.TargetRef.Name
			}
			out = append(out, fmt.Sprintf("%v ready=%v %s", e.Addresses, ptr.Deref(e.Conditions.Ready, false), pod))
		}
	}
	pods, err := env.admin.Typed.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, p := range pods.Items {
			out = append(out, fmt.Sprintf("pod %s %s %s", p.Name, p.Status.PodIP, p.Status.Phase))
		}
	}
	return strings.Join(out, "; ")
}

// notRewritten reads the host's tracked connections to ip (a ClusterIP)
// that kube-proxy did not rewrite to a pod's address (the reply would come
// from ip itself): bad lists those that something answered, stayed counts
// those that never got an answer (SYN_SENT: the real node routes the
// Service range into its bridge, where no one has the address).
func notRewritten(ip string) (bad []string, stayed int) {
	out, err := exec.Command("conntrack", "-L", "-p", "tcp", "-d", ip).Output()
	if err != nil {
		return []string{fmt.Sprintf("conntrack -L: %v", err)}, 0
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		var srcs []string
		for _, x := range f {
			if v, ok := strings.CutPrefix(x, "src="); ok {
				srcs = append(srcs, v)
			}
		}
		switch {
		case len(srcs) != 2 || srcs[1] != ip:
		case slices.Contains(f, "SYN_SENT"):
			stayed++
		default:
			bad = append(bad, line)
		}
	}
	return bad, stayed
}
