//go:build e2e

package e2e

import (
	"context"
	"net"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

const (
	credsPool        = "real-credentials"
	credsComposition = "xinferenceservices-real-credentials.inference.inferno.io"
	credsSecret      = "pull-with-proxy"
	credsToken       = "e2e-bearer-token"
)

// credentialsOnlyToOrigin: a tenant's credentials Secret that, beside its
// token, names every proxy and endpoint variable a puller could read still
// sends the pull to the origin the URI names, with the token, and nothing
// to the proxy (issue 21, part 3). The proxy is a listener of the test's
// own on the real node's bridge, which counts the connections it gets;
// the origin records the Authorization header it was asked with.
func (s *infernoSuite) credentialsOnlyToOrigin(t *testing.T) {
	if env.node == nil {
		t.Skip("no real node (-real-node=false)")
	}
	ctx := context.Background()
	sc := env.summary.start(t, "31 credentials reach only the origin (real node)")
	sc.onRealNode(false)
	if err := env.createTeamNamespace(ctx, realNS); err != nil {
		t.Fatal(err)
	}

	l, err := net.Listen("tcp", net.JoinHostPort(realBridgeIP(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var proxied atomic.Int32
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			proxied.Add(1)
			_ = c.Close()
		}
	}()
	proxy := "http://" + l.Addr().String()

	origin, err := url.Parse(env.origin.URL)
	if err != nil {
		t.Fatal(err)
	}
	ensureCredentialsComposition(ctx, t, origin.Host)
	data := map[string]string{"BEARER_TOKEN": credsToken}
	for _, k := range []string{"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy", "HF_ENDPOINT", "AWS_ENDPOINT_URL", "STORAGE_EMULATOR_HOST"} {
		data[k] = proxy
	}
	data["NO_PROXY"], data["no_proxy"] = "", ""
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: credsSecret, Namespace: realNS}, StringData: data}
	if _, err := env.admin.Typed.CoreV1().Secrets(realNS).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = env.admin.Typed.CoreV1().Secrets(realNS).Delete(context.Background(), credsSecret, metav1.DeleteOptions{})
	}()

	w := publishWeights(t, "creds-v1", "inferno credentials v1")
	path := "/creds-v1/model.markov"
	const name = "creds"
	c := realClaim(t, name, w.URI, "1", 1)
	setField(c, map[string]any{"name": credsSecret}, "spec", "model", "credentialsSecretRef")
	setField(c, map[string]any{"matchLabels": map[string]any{poolLabel: credsPool}}, "spec", "compositionSelector")
	applyClaim(ctx, t, c)
	waitClaimsReady(ctx, t, realNS, []string{name}, 3*time.Minute)

	if n := env.origin.Served(path); n == 0 {
		t.Errorf("the origin never served %s: the pull went elsewhere", path)
	}
	if got, want := env.origin.Auth(path), "Bearer "+credsToken; got != want {
		t.Errorf("the origin was asked for %s with Authorization %q, want %q", path, got, want)
	}
	if n := proxied.Load(); n != 0 {
		t.Errorf("the proxy the tenant's Secret named got %d connections", n)
	}
	sc.note("Secret with the token and %d proxy and endpoint variables: origin served %d with the token, proxy got %d connections", len(data)-1, env.origin.Served(path), proxied.Load())
	deleteClaimsAndWait(ctx, t, realNS, []string{name})
}

// ensureCredentialsComposition adds a real-node Composition that lets pull
// Jobs send credentials to the origin over plain http
// (input.policy.plainHTTPCredentialHosts), as a platform with an internal
// mirror would.
func ensureCredentialsComposition(ctx context.Context, t *testing.T, originHost string) {
	t.Helper()
	input := realNodeInput()
	input["runtimes"] = map[string]any{"fake": map[string]any{"sharedMemory": true}}
	input["policy"] = map[string]any{"plainHTTPCredentialHosts": []any{originHost}}
	applyComposition(ctx, t, "composition.yaml", credsComposition, credsPool, input)
}
