// Package controlplane starts a real Kubernetes control plane on 127.0.0.1
// for the end-to-end test: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok. Only the containers are simulated: kwok plays the
// kubelets' part (fake Nodes whose pods go Running/Ready or Succeeded as its
// Stages say), so the real Deployment, ReplicaSet, Job, PersistentVolume and
// garbage-collector controllers do the work.
package controlplane

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Identity is someone the API server knows by a static bearer token.
type Identity struct {
	User   string
	Groups []string
}

// The identities of the control plane. Crossplane and its RBAC manager are
// authenticated as the ServiceAccounts the Helm chart creates, so the
// chart's ClusterRoleBindings (subjects of kind ServiceAccount) apply to them
// unchanged: RBAC matches a ServiceAccount subject by user name.
var (
	Admin = Identity{User: "e2e-admin", Groups: []string{"system:masters"}}
	// The bootstrap RBAC policy binds these two users to their roles.
	ControllerManager = Identity{User: "system:kube-controller-manager"}
	Scheduler         = Identity{User: "system:kube-scheduler"}
	// kwok stands in for every kubelet and for a volume provisioner; it is
	// not under test, so it gets cluster-admin rather than a hand-made role.
	Kwok        = Identity{User: "kwok", Groups: []string{"system:masters"}}
	Crossplane  = ServiceAccountIdentity("crossplane-system", "crossplane")
	RBACManager = ServiceAccountIdentity("crossplane-system", "rbac-manager")
)

// ServiceAccountIdentity is the user a ServiceAccount's token authenticates
// as, with the groups the API server adds for ServiceAccounts.
func ServiceAccountIdentity(namespace, name string) Identity {
	return Identity{
		User:   "system:serviceaccount:" + namespace + ":" + name,
		Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
}

// Binaries names the executables to run.
type Binaries struct {
	Etcd, APIServer, ControllerManager, Scheduler, Kwok string
}

// BinariesIn expects the tools under dir with the names test/e2e/e2e.mk
// builds.
func BinariesIn(dir string) Binaries {
	return Binaries{
		Etcd:              filepath.Join(dir, "etcd"),
		APIServer:         filepath.Join(dir, "kube-apiserver"),
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
		Scheduler:         filepath.Join(dir, "kube-scheduler"),
		Kwok:              filepath.Join(dir, "kwok"),
	}
}

// ServiceCIDR is the Services' virtual address range.
const ServiceCIDR = "10.0.0.0/16"

// Options configure Start.
type Options struct {
	Binaries Binaries
	// WorkDir holds PKI, data, kubeconfigs and logs. It must exist.
	WorkDir string
	// KwokConfigs are kwok configuration files (Stages).
	KwokConfigs []string
	// ExtraIdentities get tokens and kubeconfigs besides the built-in ones.
	ExtraIdentities []Identity
	// AdvertiseAddress is the API server's address in the `kubernetes`
	// Service's endpoints, which pods reach it by. Empty is 127.0.0.1,
	// which no pod can reach (it is the pod's own loopback); a real node
	// advertises its bridge address and forwards it (ForwardAPI). The API
	// server listens on 127.0.0.1 only, whatever this says.
	AdvertiseAddress string
}

// ControlPlane is a running control plane.
type ControlPlane struct {
	WorkDir string
	LogDir  string
	URL     string // https://127.0.0.1:<port>
	APIPort int
	CA      *CertificateAuthority
	// CAFile is the CA's certificate on disk.
	CAFile    string
	AuditLog  string
	processes []*Process
	tokens    map[string]string // user -> bearer token
	kubecfgs  map[string]string // user -> kubeconfig path
}

// Start brings the control plane up and waits until the API server is
// ready. On error, whatever was started is stopped again.
func Start(ctx context.Context, o Options) (cp *ControlPlane, err error) {
	cp = &ControlPlane{
		WorkDir:  o.WorkDir,
		LogDir:   filepath.Join(o.WorkDir, "logs"),
		tokens:   map[string]string{},
		kubecfgs: map[string]string{},
	}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()
	pki := filepath.Join(o.WorkDir, "pki")
	for _, d := range []string{cp.LogDir, pki, filepath.Join(o.WorkDir, "kubeconfigs")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}

	// PKI: one CA for the API server's serving certificate, client
	// certificates (accepted, though the identities use tokens) and the
	// controller manager's CSR signer; a separate RSA key for ServiceAccount
	// tokens.
	if cp.CA, err = NewCertificateAuthority("inferno-e2e-ca"); err != nil {
		return nil, err
	}
	caFile := filepath.Join(pki, "ca.crt")
	caKeyFile := filepath.Join(pki, "ca.key")
	if err := os.WriteFile(caFile, cp.CA.CertPEM, 0o600); err != nil {
		return nil, err
	}
	caKey, err := marshalKey(cp.CA.Key)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(caKeyFile, caKey, 0o600); err != nil {
		return nil, err
	}
	serving, err := cp.CA.ServingCert("kube-apiserver",
		[]string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		[]net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")})
	if err != nil {
		return nil, err
	}
	servingCert, servingKey, err := serving.WriteFiles(pki, "apiserver")
	if err != nil {
		return nil, err
	}
	// The API server's client certificate for kubelets (logs, exec,
	// port-forward on a real node); the kubelet trusts the same CA.
	kubeletClient, err := cp.CA.ClientCert("kube-apiserver-kubelet-client", "system:masters")
	if err != nil {
		return nil, err
	}
	kubeletClientCert, kubeletClientKey, err := kubeletClient.WriteFiles(pki, "apiserver-kubelet-client")
	if err != nil {
		return nil, err
	}
	cp.CAFile = caFile
	saKey := filepath.Join(pki, "sa.key")
	if err := NewServiceAccountKey(saKey); err != nil {
		return nil, err
	}

	ports, err := FreePorts(6)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort, kcmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	cp.URL = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	cp.APIPort = apiPort
	advertise := o.AdvertiseAddress
	if advertise == "" {
		advertise = "127.0.0.1"
	}

	// Static tokens, one per identity.
	ids := append([]Identity{Admin, ControllerManager, Scheduler, Kwok, Crossplane, RBACManager}, o.ExtraIdentities...)
	var csv strings.Builder
	for i, id := range ids {
		tok := randomToken()
		cp.tokens[id.User] = tok
		fmt.Fprintf(&csv, "%s,%s,uid-%d,\"%s\"\n", tok, id.User, i, strings.Join(id.Groups, ","))
		if cp.kubecfgs[id.User], err = cp.writeKubeconfig(id.User, tok); err != nil {
			return nil, err
		}
	}
	tokenFile := filepath.Join(pki, "tokens.csv")
	if err := os.WriteFile(tokenFile, []byte(csv.String()), 0o600); err != nil {
		return nil, err
	}

	// etcd v3.6. --unsafe-no-fsync: the data is thrown away after the test
	// and fsync dominates write latency on a shared disk.
	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	etcd, err := cp.start("etcd", o.Binaries.Etcd, []string{
		"--name=e2e",
		"--data-dir=" + filepath.Join(o.WorkDir, "etcd"),
		"--listen-client-urls=" + etcdURL,
		"--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=e2e=" + peerURL,
		"--unsafe-no-fsync",
		"--log-level=warn",
	})
	if err != nil {
		return nil, err
	}
	if err := WaitFor(ctx, 30*time.Second, "etcd health", etcd, 100*time.Millisecond, httpOK(http.DefaultClient, etcdURL+"/health")); err != nil {
		return nil, err
	}

	// kube-apiserver. The audit log records, per request, the Pod Security
	// annotations ("pod-security.kubernetes.io/audit-violations") for
	// namespaces labelled with an audit level: the test reads it to prove the
	// function rendered nothing that breaks the "restricted" standard, even
	// though Crossplane, not the test, is the client that created it.
	policy := filepath.Join(pki, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	cp.AuditLog = filepath.Join(cp.LogDir, "audit.log")
	api, err := cp.start("kube-apiserver", o.Binaries.APIServer, []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=" + advertise,
		fmt.Sprintf("--secure-port=%d", apiPort),
		"--tls-cert-file=" + servingCert,
		"--tls-private-key-file=" + servingKey,
		"--client-ca-file=" + caFile,
		"--token-auth-file=" + tokenFile,
		"--authorization-mode=Node,RBAC",
		"--kubelet-client-certificate=" + kubeletClientCert,
		"--kubelet-client-key=" + kubeletClientKey,
		// A real node is reached on its bridge address, never by name:
		// there is no DNS for node names here.
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + saKey,
		"--service-account-signing-key-file=" + saKey,
		// Virtual addresses only (nothing routes to them here), but every
		// InferenceService takes one or more: a /24 held 254 Services and
		// `make scale N=1000` ran out ("failed to allocate a serviceIP:
		// range is full").
		"--service-cluster-ip-range=" + ServiceCIDR,
		"--audit-policy-file=" + policy,
		"--audit-log-path=" + cp.AuditLog,
		"--audit-log-format=json",
		"--audit-log-maxsize=0",
		// Profiling stays on (it answers only authenticated admins on
		// 127.0.0.1) so a slow run can be explained: see -profile.
		"--profiling=true",
		// The default 400/200 in-flight limits are fine; the stress scenario
		// is bounded by the two cores, not by API priority and fairness.
	}, gcEnv)
	if err != nil {
		return nil, err
	}
	adminHTTP, err := cp.httpClient(Admin)
	if err != nil {
		return nil, err
	}
	if err := WaitFor(ctx, 60*time.Second, "kube-apiserver /readyz", api, 200*time.Millisecond, httpOK(adminHTTP, cp.URL+"/readyz")); err != nil {
		return nil, err
	}

	// kube-controller-manager with every controller, each under its own
	// ServiceAccount (as kubeadm runs it), and the CSR signer on our CA.
	// API QPS is raised so fifty claims' worth of objects do not queue
	// behind client-side throttling.
	kcm, err := cp.start("kube-controller-manager", o.Binaries.ControllerManager, []string{
		"--kubeconfig=" + cp.kubecfgs[ControllerManager.User],
		"--controllers=*",
		"--leader-elect=false",
		"--use-service-account-credentials=true",
		"--service-account-private-key-file=" + saKey,
		"--root-ca-file=" + caFile,
		"--cluster-signing-cert-file=" + caFile,
		"--cluster-signing-key-file=" + caKeyFile,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", kcmPort),
		"--kube-api-qps=200",
		"--kube-api-burst=400",
		"--concurrent-deployment-syncs=10",
		"--concurrent-replicaset-syncs=10",
		"--concurrent-job-syncs=10",
		"--concurrent-gc-syncs=20",
		// The HPA controller's default loop, stated because it shows in the
		// timings: a claim with autoscaling is Ready only once its HPA
		// reports AbleToScale, up to 15 s after the pods are Ready. A 2 s
		// loop made claims Ready in ~6 s instead of ~19 s, but every HPA
		// status write is also a watch event for Crossplane, so the test
		// keeps what a real cluster runs.
		"--horizontal-pod-autoscaler-sync-period=15s",
	})
	if err != nil {
		return nil, err
	}

	sched, err := cp.start("kube-scheduler", o.Binaries.Scheduler, []string{
		"--kubeconfig=" + cp.kubecfgs[Scheduler.User],
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", schedPort),
	})
	if err != nil {
		return nil, err
	}

	kwokArgs := []string{
		"--kubeconfig=" + cp.kubecfgs[Kwok.User],
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--node-ip=127.0.0.1",
		fmt.Sprintf("--server-address=127.0.0.1:%d", kwokPort),
	}
	for _, c := range o.KwokConfigs {
		kwokArgs = append(kwokArgs, "--config="+c)
	}
	kwok, err := cp.start("kwok", o.Binaries.Kwok, kwokArgs)
	if err != nil {
		return nil, err
	}

	// The others have no readiness endpoint we can reach without more
	// credentials; give them a moment to fail on bad flags, and let the
	// caller's waits (a Node Ready, a pod scheduled) prove the rest.
	time.Sleep(2 * time.Second)
	for _, p := range []*Process{kcm, sched, kwok} {
		if exited, perr := p.Exited(); exited {
			return nil, fmt.Errorf("%s exited at start (%v)\n--- tail of %s ---\n%s", p.Name, perr, p.LogPath, Tail(p.LogPath, 40))
		}
	}
	return cp, nil
}

// gcEnv trades memory for CPU in the busiest processes: under the stress
// scenario the API server (serving Crossplane's server-side applies) is what
// saturates the two cores, and the machine has memory to spare.
const gcEnv = "GOGC=400"

// auditPolicy logs metadata (user, verb, object, annotations; no bodies) for
// writes of the kinds the function renders and of pods.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  verbs: ["create", "update", "patch"]
  resources:
  - group: ""
    resources: ["pods", "persistentvolumeclaims", "services"]
  - group: "apps"
    resources: ["deployments", "replicasets"]
  - group: "batch"
    resources: ["jobs"]
  - group: "autoscaling"
    resources: ["horizontalpodautoscalers"]
- level: None
`

func (cp *ControlPlane) start(name, bin string, args []string, env ...string) (*Process, error) {
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s binary: %w (run `make e2e-tools`)", name, err)
	}
	p, err := StartProcess(name, cp.LogDir, bin, args, env...)
	if err != nil {
		return nil, err
	}
	cp.processes = append(cp.processes, p)
	return p, nil
}

// StartProcess starts another long-running process that is stopped with the
// control plane (Crossplane, the function).
func (cp *ControlPlane) StartProcess(name, bin string, args []string, env ...string) (*Process, error) {
	return cp.start(name, bin, args, env...)
}

// Stop stops every process in reverse order of start. Safe to call twice.
func (cp *ControlPlane) Stop() {
	for i := len(cp.processes) - 1; i >= 0; i-- {
		cp.processes[i].Stop(10 * time.Second)
	}
}

// Processes lists what was started, for log paths and liveness checks.
func (cp *ControlPlane) Processes() []*Process { return cp.processes }

// Kubeconfig is the path of the kubeconfig for an identity.
func (cp *ControlPlane) Kubeconfig(id Identity) string { return cp.kubecfgs[id.User] }

// RESTConfig is a client configuration for an identity. Client-side rate
// limits are raised: the test polls many objects at once.
func (cp *ControlPlane) RESTConfig(id Identity) (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.kubecfgs[id.User])
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 200, 400
	return cfg, nil
}

// HTTPClient is an HTTP client authenticated as id, for endpoints the typed
// clients do not cover (/debug/pprof).
func (cp *ControlPlane) HTTPClient(id Identity) (*http.Client, error) { return cp.httpClient(id) }

func (cp *ControlPlane) httpClient(id Identity) (*http.Client, error) {
	cfg, err := cp.RESTConfig(id)
	if err != nil {
		return nil, err
	}
	return rest.HTTPClientFor(cfg)
}

func (cp *ControlPlane) writeKubeconfig(user, token string) (string, error) {
	path := filepath.Join(cp.WorkDir, "kubeconfigs", strings.NewReplacer(":", "_").Replace(user)+".kubeconfig")
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: cp.URL, CertificateAuthorityData: cp.CA.CertPEM}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: user}
	cfg.CurrentContext = "e2e"
	return path, clientcmd.WriteToFile(*cfg, path)
}

func httpOK(c *http.Client, url string) func(context.Context) (bool, error) {
	return func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := c.Do(req)
		if err != nil {
			return false, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return false, fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return true, nil
	}
}

func marshalKey(k crypto.Signer) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		return nil, err
	}
	return pemBlock("PRIVATE KEY", der), nil
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
