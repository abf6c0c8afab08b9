//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/inferno-ai/function-inferno/test/e2e/controlplane"
	"github.com/inferno-ai/function-inferno/test/e2e/images"
	"github.com/inferno-ai/function-inferno/test/e2e/realnode"
)

// The real node: one kubelet with containerd on a bridge of the test's own,
// beside kwok's fake GPU node. It is a node pool of its own, as a platform
// team would set one up: labelled, and tainted so that nothing lands there
// unless it asks to. Claims reach it through a second Composition whose
// Input places every pod on the pool (realNodeComposition).
const (
	RealNodeName = "real-node-1"
	// poolLabel and realPool label and taint the real node.
	poolLabel = "inference.inferno.io/pool"
	realPool  = "real"
	// RealStorageClass is served by local-path-provisioner on the real
	// node: real directories, written by the pull and read by the servers.
	RealStorageClass = "real-local-path"
	// realBridge and realSubnet are the pods' network; the bridge's
	// address (the subnet's first) is the node's InternalIP and the model
	// origin's.
	realBridge = "infe2e0"
	realSubnet = "10.213.0.0/24"
)

// Images the real node runs, all built by the test and imported into
// containerd; nothing is pulled. The fake model server keeps the name the
// `fake` preset gives it (input/v1beta1/defaults.go), so the preset is what
// is tested.
const (
	pauseImage      = "localhost/inferno-e2e/pause:e2e"
	busyboxImage    = "localhost/inferno-e2e/busybox:e2e"
	httpPullerImage = "localhost/inferno-e2e/http-puller:e2e"
	fakeServerImage = "ghcr.io/inferno-ai/fake-model-server:v0.1.0"
	// llamaServerImage is llama.cpp's llama-server (bin/llama, built by
	// `make e2e-tools`). The llamacpp preset keeps naming the upstream
	// image; the real-node Input points runtimes.llamacpp.image here.
	llamaServerImage = "localhost/inferno-e2e/llama-server:e2e"
	// ollamaServerImage is Ollama's server (bin/ollama, built by `make
	// e2e-tools`), which the real-node Input names for the ollama preset
	// as it does llama-server's.
	ollamaServerImage = "localhost/inferno-e2e/ollama:e2e"
)

// Identities of the real node's programs.
var (
	nodeIdentity      = controlplane.Identity{User: "system:node:" + RealNodeName, Groups: []string{"system:nodes"}}
	kubeProxyIdentity = controlplane.Identity{User: "system:kube-proxy"}
	// The provisioner is not under test (as kwok is not): cluster-admin.
	localPathIdentity = controlplane.Identity{User: "local-path-provisioner", Groups: []string{"system:masters"}}
)

// realNodeIdentities are added to the control plane's static tokens.
func realNodeIdentities() []controlplane.Identity {
	return []controlplane.Identity{nodeIdentity, kubeProxyIdentity, localPathIdentity}
}

func (e *environment) nodeDir() string { return filepath.Join(e.workDir, "node") }

// startRealNode builds the node's images, starts the node, the volume
// provisioner and the model origin.
func (e *environment) startRealNode(ctx context.Context) error {
	start := time.Now()
	imgDir := filepath.Join(e.workDir, "images")
	if err := os.MkdirAll(imgDir, 0o755); err != nil {
		return err
	}
	tarballs, err := buildNodeImages(ctx, imgDir, e.logDir())
	if err != nil {
		return fmt.Errorf("node images: %w", err)
	}
	e.fakeServer = filepath.Join(imgDir, "fake-model-server")
	subnet := netip.MustParsePrefix(realSubnet)
	e.node, err = realnode.Start(ctx, realnode.Options{
		Name:            RealNodeName,
		WorkDir:         e.nodeDir(),
		LogDir:          e.logDir(),
		Kubelet:         filepath.Join(binDir(), "kubelet"),
		KubeProxy:       filepath.Join(binDir(), "kube-proxy"),
		CA:              e.cp.CA,
		CAFile:          e.cp.CAFile,
		Kubeconfig:      e.cp.Kubeconfig(nodeIdentity),
		ProxyKubeconfig: e.cp.Kubeconfig(kubeProxyIdentity),
		Client:          e.admin.Typed,
		Bridge:          realBridge,
		Logf:            stderrf,
		Subnet:          subnet,
		// Pods reach ClusterIPs: pull pods report progress to the API
		// server through the `kubernetes` Service.
		ServiceCIDR:  netip.MustParsePrefix(controlplane.ServiceCIDR),
		Labels:       map[string]string{poolLabel: realPool},
		Taints:       []corev1.Taint{{Key: poolLabel, Value: realPool, Effect: corev1.TaintEffectNoSchedule}},
		PauseImage:   pauseImage,
		PauseTarball: tarballs[pauseImage],
	})
	if err != nil {
		return err
	}
	for ref, tb := range tarballs {
		if ref == pauseImage {
			continue
		}
		if err := e.node.Import(ctx, tb); err != nil {
			return err
		}
	}
	if err := e.startLocalPath(ctx); err != nil {
		return err
	}
	if e.origin, err = startOrigin(e.node.IP, filepath.Join(e.workDir, "origin"), e.logDir()); err != nil {
		return err
	}
	if e.node.IP != realBridgeIP() {
		return fmt.Errorf("the node's address %s is not the advertised %s", e.node.IP, realBridgeIP())
	}
	if e.apiForward, err = forwardAPI(e.node.IP, e.cp.APIPort); err != nil {
		return err
	}
	e.nodeSetup = time.Since(start)
	return nil
}

// buildNodeImages writes every image the real node runs and returns their
// tarballs by tag.
//   - pause: a static Go program that waits for SIGTERM.
//   - busybox: Debian's static busybox, for local-path-provisioner's helper
//     pods (mkdir, rm).
//   - http-puller: the built-in http(s) pull script's needs, a shell and
//     coreutils (busybox) and Debian's curl with its libraries: the
//     Input points the http and https pullers at it, and the script stays
//     the built-in one.
//   - the fake model server, built from cmd/fake-model-server, as the
//     Dockerfile there builds it.
func buildNodeImages(ctx context.Context, dir, logDir string) (map[string]string, error) {
	out := map[string]string{}
	build := func(name, moduleDir, pkg string) (string, error) {
		bin := filepath.Join(dir, name)
		err := controlplane.RunCommandIn(ctx, moduleDir, "build-"+name, logDir, "go",
			[]string{"build", "-trimpath", "-ldflags=-s -w", "-o", bin, pkg}, "CGO_ENABLED=0")
		return bin, err
	}
	e2eDir, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	pause, err := build("pause", e2eDir, "./cmd/pause")
	if err != nil {
		return nil, err
	}
	fakeServer, err := build("fake-model-server", repoRoot(), "./cmd/fake-model-server")
	if err != nil {
		return nil, err
	}
	busybox, err := exec.LookPath("busybox")
	if err != nil {
		return nil, fmt.Errorf("busybox (Debian's busybox-static): %w", err)
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		return nil, fmt.Errorf("curl: %w", err)
	}
	applets := []string{"sh", "mkdir", "rm", "mv", "cat", "ls", "chmod", "sleep", "printf", "echo", "test", "[", "du", "wc", "date"}

	var specs []images.Spec
	pauseBin, err := images.Binary(pause, "/pause")
	if err != nil {
		return nil, err
	}
	specs = append(specs, images.Spec{Tag: pauseImage, Files: []images.File{pauseBin}, Entrypoint: []string{"/pause"}, User: images.NonRoot})

	bb, err := images.Busybox(busybox, applets...)
	if err != nil {
		return nil, err
	}
	specs = append(specs, images.Spec{Tag: busyboxImage, Files: bb, Entrypoint: []string{"/bin/sh"}})

	curlFiles, err := images.HostProgram(curl)
	if err != nil {
		return nil, err
	}
	specs = append(specs, images.Spec{Tag: httpPullerImage, Files: append(append([]images.File(nil), bb...), curlFiles...),
		Env: []string{"PATH=/usr/bin:/bin"}, User: images.NonRoot})

	srv, err := images.Binary(fakeServer, "/fake-model-server")
	if err != nil {
		return nil, err
	}
	specs = append(specs, images.Spec{Tag: fakeServerImage, Files: []images.File{srv},
		Entrypoint: []string{"/fake-model-server"}, User: images.NonRoot, Ports: []string{"8080/tcp"}})

	// Without bin/llama (a test binary run by hand) the node runs without
	// the image and scenario 32 fails, naming the missing tool.
	if _, err := os.Stat(llamaServerBinary()); err == nil {
		llama, err := llamaServerFiles(llamaServerBinary(), busybox)
		if err != nil {
			return nil, fmt.Errorf("llama-server image: %w", err)
		}
		specs = append(specs, images.Spec{Tag: llamaServerImage, Files: llama,
			Entrypoint: []string{"/app/llama-server"}, Env: []string{"PATH=/app:/bin"}, User: images.NonRoot, Ports: []string{"8080/tcp"}})
	}

	// The same for bin/ollama and scenario 36.
	if _, err := os.Stat(ollamaServerBinary()); err == nil {
		files, err := ollamaServerFiles(ollamaServerBinary(), busybox)
		if err != nil {
			return nil, fmt.Errorf("ollama image: %w", err)
		}
		specs = append(specs, images.Spec{Tag: ollamaServerImage, Files: files,
			Entrypoint: []string{"/usr/bin/ollama"}, Env: []string{"PATH=/usr/bin:/bin"}, User: images.NonRoot, Ports: []string{"11434/tcp"}})
	}

	for _, s := range specs {
		name := s.Tag[strings.LastIndex(s.Tag, "/")+1:]
		p := filepath.Join(dir, strings.ReplaceAll(name, ":", "_")+".tar")
		if err := images.Write(s, p); err != nil {
			return nil, fmt.Errorf("%s: %w", s.Tag, err)
		}
		out[s.Tag] = p
	}
	return out, nil
}

// startLocalPath runs local-path-provisioner out of cluster for the real
// node's StorageClass: it creates each volume's directory with a helper pod
// on the node (busybox: mkdir -m 0777, so the pods' UID 65532 can write)
// and a hostPath PersistentVolume pinned to the node.
func (e *environment) startLocalPath(ctx context.Context) error {
	const ns = "local-path-storage"
	dir := filepath.Join(e.workDir, "local-path")
	volumes := filepath.Join(e.nodeDir(), "volumes")
	for _, d := range []string{dir, volumes} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	core := e.admin.Typed.CoreV1()
	if _, err := core.Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	if _, err := core.ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "local-path-provisioner"}}, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	config := fmt.Sprintf(`{"nodePathMap":[{"node":"DEFAULT_PATH_FOR_NON_LISTED_NODES","paths":[%q]}]}`, volumes)
	helperPod := `apiVersion: v1
kind: Pod
metadata:
  name: helper-pod
spec:
  containers:
  - name: helper-pod
    image: ` + busyboxImage + `
    imagePullPolicy: Never
`
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "local-path-config", Namespace: ns},
		Data: map[string]string{
			"config.json":    config,
			"helperPod.yaml": helperPod,
			"setup":          "#!/bin/sh\nset -eu\nmkdir -m 0777 -p \"$VOL_DIR\"\n",
			"teardown":       "#!/bin/sh\nset -eu\nrm -rf \"$VOL_DIR\"\n",
		},
	}
	if _, err := core.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	configFile := filepath.Join(dir, "config.json")
	helperFile := filepath.Join(dir, "helperPod.yaml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(helperFile, []byte(helperPod), 0o644); err != nil {
		return err
	}
	if _, err := e.cp.StartProcess("local-path-provisioner", filepath.Join(binDir(), "local-path-provisioner"), []string{
		"--debug", "start",
		"--config=" + configFile,
		"--helper-pod-file=" + helperFile,
		"--provisioner-name=rancher.io/local-path",
		"--namespace=" + ns,
		"--configmap-name=local-path-config",
		"--service-account-name=local-path-provisioner",
		"--helper-image=" + busyboxImage,
		"--kubeconfig=" + e.cp.Kubeconfig(localPathIdentity),
	}); err != nil {
		return err
	}
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	reclaim := corev1.PersistentVolumeReclaimDelete
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: RealStorageClass},
		Provisioner:       "rancher.io/local-path",
		ReclaimPolicy:     &reclaim,
		VolumeBindingMode: &mode,
	}
	if _, err := e.admin.Typed.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// origin is the model origin: an HTTP server on the real node's bridge
// address serving weights files, as a model hub or a bucket's HTTP endpoint
// would. Pods reach it through the bridge; it counts what it served, so a
// scenario can tell a real download from a pull that found its marker.
type origin struct {
	Dir  string
	URL  string // http://<bridge address>:<port>
	srv  *http.Server
	mu   sync.Mutex
	gets map[string]int
	// auth is the last Authorization header each path was asked with.
	auth map[string]string
	// rates paces the files of some paths, in bytes per second.
	rates map[string]int64
}

// Throttle serves path at most bytesPerSecond, as a slow link would.
func (o *origin) Throttle(path string, bytesPerSecond int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.rates[path] = bytesPerSecond
}

// pacedWriter writes no faster than rate bytes per second since start.
type pacedWriter struct {
	http.ResponseWriter
	rate    int64
	start   time.Time
	written int64
}

func (w *pacedWriter) Write(b []byte) (int, error) {
	total := 0
	for len(b) > 0 {
		n := min(len(b), 64<<10)
		m, err := w.ResponseWriter.Write(b[:n])
		total += m
		w.written += int64(m)
		if err != nil {
			return total, err
		}
		b = b[n:]
		if due := time.Duration(w.written * int64(time.Second) / w.rate); due > time.Since(w.start) {
			time.Sleep(due - time.Since(w.start))
		}
	}
	return total, nil
}

// realBridgeIP is the real node's bridge address, the subnet's first.
func realBridgeIP() string { return netip.MustParsePrefix(realSubnet).Addr().Next().String() }

// forwardAPI listens on the bridge address at the API server's port and
// forwards every connection to the API server on 127.0.0.1: the
// `kubernetes` Service's endpoint (the advertised address) for the pods
// of the real node, and nowhere else. TLS passes through untouched.
func forwardAPI(ip string, port int) (net.Listener, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, fmt.Sprint(port)))
	if err != nil {
		return nil, fmt.Errorf("forwarding the API server to the bridge: %w", err)
	}
	target := net.JoinHostPort("127.0.0.1", fmt.Sprint(port))
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.DialTimeout("tcp", target, 5*time.Second)
				if err != nil {
					return
				}
				defer u.Close()
				done := make(chan struct{}, 2)
				go func() { _, _ = io.Copy(u, c); done <- struct{}{} }()
				go func() { _, _ = io.Copy(c, u); done <- struct{}{} }()
				<-done
			}()
		}
	}()
	return l, nil
}

func startOrigin(ip, dir, logDir string) (*origin, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(logDir, "origin.log"))
	if err != nil {
		return nil, err
	}
	o := &origin{Dir: dir, URL: "http://" + l.Addr().String(), gets: map[string]int{}, auth: map[string]string{}, rates: map[string]int64{}}
	files := http.FileServer(http.Dir(dir))
	o.srv = &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(logf, "%s %s %s %s\n", time.Now().Format(time.RFC3339Nano), r.RemoteAddr, r.Method, r.URL.Path)
		o.mu.Lock()
		o.gets[r.URL.Path]++
		o.auth[r.URL.Path] = r.Header.Get("Authorization")
		rate := o.rates[r.URL.Path]
		o.mu.Unlock()
		if rate > 0 {
			w = &pacedWriter{ResponseWriter: w, rate: rate, start: time.Now()}
		}
		files.ServeHTTP(w, r)
	})}
	go func() { _ = o.srv.Serve(l) }()
	return o, nil
}

// Served is how often path was requested.
func (o *origin) Served(path string) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.gets[path]
}

// Auth is the Authorization header path was last asked with.
func (o *origin) Auth(path string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.auth[path]
}

func (o *origin) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = o.srv.Shutdown(ctx)
}
