package v1beta1

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// shells are the POSIX shells the built-in pull scripts must run in: dash
// (Debian, Ubuntu), busybox ash (Alpine, the curl image) and bash.
var shells = [][]string{{"dash"}, {"busybox", "sh"}, {"bash", "--posix"}}

// install says how to get each prerequisite of the pull-script tests on
// Debian, as .ci/run does.
var install = map[string]string{
	"dash":       "apt-get install -y dash",
	"busybox":    "apt-get install -y busybox-static",
	"bash":       "apt-get install -y bash",
	"curl":       "apt-get install -y curl",
	"127.0.0.2":  "on Linux every 127.0.0.0/8 address is the loopback; elsewhere add an alias, e.g. `ifconfig lo0 alias 127.0.0.2` on macOS",
	"a POSIX sh": "apt-get install -y dash",
}

// missing reports a prerequisite of the pull-script tests that this
// machine lacks. Outside CI the test is skipped; with CI=true it fails, so
// that a CI run cannot go green without having run the scripts.
func missing(t *testing.T, what string, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is missing (%v) and CI=true: the pull-script tests must run in CI. Install it: %s", what, err, install[what])
	}
	t.Skipf("%s is missing (%v); skipped (with CI=true this fails). Install it: %s", what, err, install[what])
}

// needCurl fails or skips the test (see missing) when there is no curl.
func needCurl(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("curl"); err != nil {
		missing(t, "curl", err)
	}
}

// availableShells are the shells of this machine, at least one. In CI
// (CI=true) every one of shells must be there.
func availableShells(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	for _, sh := range shells {
		_, err := exec.LookPath(sh[0])
		switch {
		case err == nil:
			out = append(out, sh)
		case os.Getenv("CI") == "true":
			missing(t, sh[0], err)
		}
	}
	if len(out) == 0 {
		missing(t, "a POSIX sh", errors.New("none of dash, busybox, bash on PATH"))
	}
	return out
}

// TestPullScriptsParse: every built-in pull script is valid POSIX sh in
// every shell at hand, and says what makes it end.
func TestPullScriptsParse(t *testing.T) {
	must := map[string][]string{
		"http":  {"--globoff", "--proto =http,https", "--proto-redir =http,https", "--speed-limit 1024", `--speed-time "$stall"`, "--retry 5", "--max-redirs", "--connect-timeout", "exit 75"},
		"https": {"--globoff", "--proto =http,https", "--proto-redir =http,https", "--speed-limit 1024", `--speed-time "$stall"`, "--retry 5", "--max-redirs", "--connect-timeout", "exit 75"},
		"hf":    {"watch hf download", "HF_HUB_DOWNLOAD_TIMEOUT", "HF_HUB_ETAG_TIMEOUT", "exit 75"},
		"s3":    {"watch aws s3 sync", "--cli-read-timeout", "--cli-connect-timeout", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE", "exit 75"},
		"gs":    {"watch gcloud storage rsync", "CLOUDSDK_STORAGE_MAX_RETRIES", "CLOUDSDK_CORE_HTTP_TIMEOUT", "exit 75"},
	}
	for scheme, p := range BuiltinPullers() {
		script := p.Command[2]
		var missing []string
		for _, m := range must[scheme] {
			if !strings.Contains(script, m) {
				missing = append(missing, m)
			}
		}
		if diff := cmp.Diff([]string(nil), missing); diff != "" {
			t.Errorf("the %s puller lacks (-want +got):\n%s", scheme, diff)
		}
		for _, sh := range availableShells(t) {
			cmd := exec.Command(sh[0], append(sh[1:], "-n", "-c", script)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s -n: the %s puller does not parse: %v\n%s", strings.Join(sh, " "), scheme, err, out)
			}
		}
	}
	if fmt.Sprint(PullStalledExitCode) != "75" {
		t.Errorf("the scripts exit 75 on a stall; PullStalledExitCode is %d", PullStalledExitCode)
	}
}

// pullEnv runs the built-in puller of scheme with sh against uri, with
// extra environment, and returns its exit code, its output and TARGET_DIR.
func pullEnv(t *testing.T, sh []string, scheme, uri string, extra ...string) (int, string, string) {
	t.Helper()
	p := BuiltinPullers()[scheme]
	dir := filepath.Join(t.TempDir(), "weights")
	_, source, _ := strings.Cut(uri, "://")
	cmd := exec.Command(sh[0], append(sh[1:], "-c", p.Command[2])...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TARGET_DIR=" + dir,
		"MODEL_URI=" + uri, "MODEL_SOURCE=" + source, "MODEL_REVISION="}, extra...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return code, string(out), dir
}

// TestHTTPPullerForReal runs the http puller with this machine's curl
// (built for curl 7.88, Debian 12's) and shells against local servers:
// it downloads and marks the weights, takes [] and {} literally, follows
// no redirect to another protocol, and sends the bearer token to the URI's
// host only.
func TestHTTPPullerForReal(t *testing.T) {
	needCurl(t)
	var mu sync.Mutex
	var seen []string
	record := func(r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s %s auth=%q", r.Host, r.RequestURI, r.Header.Get("Authorization")))
	}
	// other is a second host (127.0.0.2) that redirects land on.
	otherLn, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		missing(t, "127.0.0.2", err)
	}
	other := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		_, _ = w.Write([]byte("weights"))
	}))
	other.Listener.Close()
	other.Listener = otherLn
	other.Start()
	defer other.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		record(r)
		switch {
		case r.URL.Path == "/model.gguf":
			_, _ = w.Write([]byte("weights"))
		case r.URL.Path == "/to-file":
			http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
		case r.URL.Path == "/to-other":
			http.Redirect(w, r, other.URL+"/model.gguf", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	otherHost := strings.TrimPrefix(other.URL, "http://")

	for _, sh := range availableShells(t) {
		t.Run(strings.Join(sh, " "), func(t *testing.T) {
			type result struct {
				Code  int
				Files string
				Seen  []string
			}
			cases := map[string]struct {
				uri   string
				token string
				want  result
			}{
				"Downloads":      {uri: srv.URL + "/model.gguf", token: "t0k", want: result{Files: ".inferno-complete model.gguf", Seen: []string{host + " /model.gguf auth=\"Bearer t0k\""}}},
				"NoGlobbing":     {uri: srv.URL + "/m[1-3].bin", want: result{Code: 22, Seen: []string{host + " /m[1-3].bin auth=\"\""}}},
				"NoBraces":       {uri: srv.URL + "/{a,b}.bin", want: result{Code: 22, Seen: []string{host + " /{a,b}.bin auth=\"\""}}},
				"NoFileRedirect": {uri: srv.URL + "/to-file", want: result{Code: 1, Seen: []string{host + " /to-file auth=\"\""}}},
				"TokenStaysHome": {uri: srv.URL + "/to-other", token: "s3cret", want: result{Files: ".inferno-complete to-other", Seen: []string{
					host + " /to-other auth=\"Bearer s3cret\"", otherHost + " /model.gguf auth=\"\"",
				}}},
			}
			for name, tc := range cases {
				t.Run(name, func(t *testing.T) {
					mu.Lock()
					seen = nil
					mu.Unlock()
					var extra []string
					if tc.token != "" {
						extra = append(extra, "BEARER_TOKEN="+tc.token)
					}
					code, out, dir := pullEnv(t, sh, "http", tc.uri, extra...)
					entries, _ := os.ReadDir(dir)
					var files []string
					for _, e := range entries {
						files = append(files, e.Name())
					}
					mu.Lock()
					got := result{Code: code, Files: strings.Join(files, " "), Seen: append([]string(nil), seen...)}
					mu.Unlock()
					if diff := cmp.Diff(tc.want, got); diff != "" {
						t.Errorf("pull of %s (-want +got):\n%s\noutput:\n%s", tc.uri, diff, out)
					}
				})
			}
		})
	}
}

// TestWatchdogStopsStalls runs the hf puller with a stand-in hf that
// stalls, fails or succeeds: the watchdog stops a download whose directory
// does not grow, with exit code 75, and passes every other outcome on.
func TestWatchdogStopsStalls(t *testing.T) {
	bin := t.TempDir()
	fake := `#!/bin/sh
dir=""; while [ $# -gt 0 ]; do [ "$1" = --local-dir ] && dir=$2; shift; done
case "$FAKE" in
ok) echo data > "$dir/model.safetensors" ;;
stall) echo x > "$dir/part.incomplete"; exec sleep 60 ;;
fail) echo "repository not found" >&2; exit 3 ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "hf"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	path := "PATH=" + bin + ":" + os.Getenv("PATH")
	for _, sh := range availableShells(t) {
		for fake, want := range map[string]int{"ok": 0, "fail": 3, "stall": int(PullStalledExitCode)} {
			t.Run(strings.Join(sh, " ")+"/"+fake, func(t *testing.T) {
				t.Parallel()
				start := time.Now()
				code, out, _ := pullEnv(t, sh, "hf", "hf://org/model", path, "FAKE="+fake, EnvPullStallSeconds+"=4")
				if code != want {
					t.Errorf("exit %d, want %d\n%s", code, want, out)
				}
				if d := time.Since(start); d > 20*time.Second {
					t.Errorf("took %s", d)
				}
			})
		}
	}
}
