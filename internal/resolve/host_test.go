package resolve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// hostCorpus is the differential test's URIs: each a way to make a URI's
// text say one host while a parser reaches another, or to spell one host
// in several ways.
var hostCorpus = []string{
	"http://a.allowed.test/m.gguf",
	"http://A.ALLOWED.TEST/m.gguf",
	"http://a.allowed.test./m.gguf",
	"http://a.allowed.test../m.gguf",
	"https://a.allowed.test:443/m.gguf",
	"https://a.allowed.test:0443/m.gguf",
	"http://a.allowed.test:80/m.gguf",
	"http://a.allowed.test:8080/m.gguf",
	"http://a.allowed.test:/m.gguf",
	"http://evil.test?@a.allowed.test/m.gguf",
	"http://evil.test#@a.allowed.test/m.gguf",
	"http://evil.test?.allowed.test/m.gguf",
	"http://evil.test#.allowed.test/m.gguf",
	"https://evil.test#.allowed.test/m.gguf",
	"http://user@a.allowed.test/m.gguf",
	"http://a.allowed.test@evil.test/m.gguf",
	"https://a.allowed.test:443@evil.test/m.gguf",
	"http://evil.test\\@a.allowed.test/m.gguf",
	"http://evil.test\\.allowed.test/m.gguf",
	"http://a.allowed.test\\@evil.test/m.gguf",
	"http://a.allowed.test%2eevil.test/m.gguf",
	"http://evil.test%40a.allowed.test/m.gguf",
	"http://evil.test%2f.allowed.test/m.gguf",
	"http://a%2eallowed.test/m.gguf",
	"http://evil.test;.allowed.test/m.gguf",
	"http://evil.test\t.allowed.test/m.gguf",
	"http://evil.test\n.allowed.test/m.gguf",
	"http://a.allowed.test.evil.test/m.gguf",
	"http://[::1]/m.gguf",
	"http://[::1]:8080/m.gguf",
	"http://[0:0::1]/m.gguf",
	"http://[::ffff:127.0.0.1]/m.gguf",
	"http://[fe80::1%25lo]/m.gguf",
	"http://127.0.0.1/m.gguf",
	"http://0x7f.1/m.gguf",
	"http://0x7f000001/m.gguf",
	"http://2130706433/m.gguf",
	"http://0177.0.0.1/m.gguf",
	"http://127.1/m.gguf",
	"http://évil.allowed.test/m.gguf",
	"http://a.allowed.test/..%2f..%2fx?q=@evil.test#@evil.test",
	"http:/\\evil.test/m.gguf",
	"HTTP://evil.test/m.gguf",
}

// TestURIOriginAgreesWithCurl holds URIOrigin to curl, which runs the
// http(s) pulls: for each URI of hostCorpus, curl is sent to a local
// listener whatever the host (--connect-to), and the Host it sends must be
// the origin URIOrigin names, compared as hosts (case, trailing dot,
// default port, the spelling of an IP address) — or URIOrigin refuses the
// URI. A URI that curl itself refuses may be named or refused.
func TestURIOriginAgreesWithCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("curl is not installed; the CI image must have it")
		}
		t.Skip("curl is not installed")
	}
	hosts := make(chan string, 1)
	record := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case hosts <- r.Host:
		default:
		}
	})
	plain, tlsServer := httptest.NewServer(record), httptest.NewTLSServer(record)
	defer plain.Close()
	defer tlsServer.Close()
	port := func(s *httptest.Server) string { u, _ := url.Parse(s.URL); return u.Port() }
	ports := map[string]string{"http": port(plain), "https": port(tlsServer)}

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	for _, uri := range hostCorpus {
		scheme, _, _ := strings.Cut(strings.ToLower(uri), ":")
		p := ports[scheme]
		if p == "" {
			p = ports["http"]
		}
		for len(hosts) > 0 {
			<-hosts
		}
		cmd := exec.CommandContext(ctx, curl, "-sS", "--max-time", "3", "-g", "-k", "-o", "/dev/null",
			"--proto", "=http,https", "--connect-to", "::127.0.0.1:"+p, uri)
		out, runErr := cmd.CombinedOutput()
		sent := ""
		select {
		case sent = <-hosts:
		default:
		}
		o, err := URIOrigin(uri)
		verdict := "refused: " + errText(err)
		if err == nil {
			verdict = o.String()
			if SourceAllowed(Model{Origin: o}, []string{"http://*.allowed.test", "https://*.allowed.test"}) {
				verdict += " (allowed by *.allowed.test)"
			}
		}
		curlSaw := "no request (" + strings.TrimSpace(string(out)) + ")"
		if sent != "" {
			curlSaw = "Host: " + sent
		}
		t.Logf("| `%q` | %s | %s |", uri, curlSaw, verdict)
		switch {
		case err != nil:
			// Refusing is always safe.
		case sent == "":
			if runErr == nil {
				t.Errorf("%q: curl succeeded but the listener saw no request", uri)
			}
		default:
			h, p, ok := curlHost(o.Scheme, sent)
			if !ok || h != o.Host || p != o.Port {
				t.Errorf("%q: curl sent Host %q (host %q, port %q), but URIOrigin names %s (host %q, port %q)", uri, sent, h, p, o, o.Host, o.Port)
			}
		}
	}
	if ctx.Err() != nil {
		t.Fatal("the corpus took over 90 s")
	}
}

// curlHost reads a Host header as a host: lowercase, without a trailing
// dot, the scheme's default port when it names none, an IP address in
// canonical form.
func curlHost(scheme, header string) (host, port string, ok bool) {
	host, port, err := net.SplitHostPort(header)
	if err != nil {
		host, port = strings.Trim(header, "[]"), map[string]string{"http": "80", "https": "443"}[scheme]
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if a, err := netip.ParseAddr(host); err == nil {
		host = a.String()
	}
	return host, port, true
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestURIOrigin names the origin of URIs that differ only in how they
// spell it, and refuses the tricks.
func TestURIOrigin(t *testing.T) {
	same := map[string]Origin{
		"https://A.Allowed.Test./x":       {Scheme: "https", Host: "a.allowed.test", Port: "443"},
		"https://a.allowed.test:443/x":    {Scheme: "https", Host: "a.allowed.test", Port: "443"},
		"https://a.allowed.test:8443/x?y": {Scheme: "https", Host: "a.allowed.test", Port: "8443"},
		"http://evil.test#.allowed.test":  {Scheme: "http", Host: "evil.test", Port: "80"},
		"http://evil.test?@allowed.test":  {Scheme: "http", Host: "evil.test", Port: "80"},
		"http://[0:0::1]:80/":             {Scheme: "http", Host: "::1", Port: "80"},
		"hf://Meta-Llama/Llama-3":         {Scheme: "hf", Host: "meta-llama"},
		"s3://models/llama":               {Scheme: "s3", Host: "models"},
		"oci://Registry.Internal:443/m:1": {Scheme: "oci", Host: "registry.internal", Port: "443"},
	}
	for uri, want := range same {
		if got, err := URIOrigin(uri); err != nil || got != want {
			t.Errorf("URIOrigin(%q) = %+v, %v; want %+v", uri, got, err, want)
		}
	}
	for _, uri := range []string{
		"http://u@a.allowed.test/", "http://a%2eb.test/", "http://0x7f.1/", "http://127.1/",
		"http://[::ffff:1.2.3.4]/", "http://a\\b/", "http://a.test:99999/", "s3://Models/x",
		"s3://a#b/x", "gs://a:b/x", "http://a..b/", "http://é.test/",
	} {
		if o, err := URIOrigin(uri); err == nil {
			t.Errorf("URIOrigin(%q) = %+v, want a refusal", uri, o)
		} else if strings.Contains(uri, "@") && !errors.Is(err, ErrUserinfo) {
			t.Errorf("URIOrigin(%q) refused for %v, want ErrUserinfo", uri, err)
		}
	}
}

// FuzzURIHost: URIOrigin never panics, and an http(s) URI it names a host
// for that *.allowed.test allows really has a host below allowed.test as
// net/url reads it, with no user name.
func FuzzURIHost(f *testing.F) {
	for _, uri := range hostCorpus {
		f.Add(uri)
	}
	allow := []string{"http://*.allowed.test", "https://*.allowed.test"}
	f.Fuzz(func(t *testing.T, uri string) {
		o, err := URIOrigin(uri)
		if err != nil || (o.Scheme != "http" && o.Scheme != "https") {
			return
		}
		if !SourceAllowed(Model{Origin: o}, allow) {
			return
		}
		u, perr := url.Parse(uri)
		if perr != nil {
			t.Fatalf("URIOrigin(%q) = %+v, allowed, but net/url refuses it: %v", uri, o, perr)
		}
		h := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		if u.User != nil || !strings.HasSuffix(h, ".allowed.test") || h != o.Host {
			t.Fatalf("URIOrigin(%q) = %+v, allowed, but net/url reads host %q, user %v", uri, o, u.Hostname(), u.User)
		}
	})
}
