package v1beta1

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPullScriptsSpellTheGoConstants: the scripts spell out the names and
// values they share with Go, which used to be spliced in.
func TestPullScriptsSpellTheGoConstants(t *testing.T) {
	must := []string{
		`"$TARGET_DIR/` + MarkerFile + `"`,
		`stall="${` + EnvPullStallSeconds + `:-` + fmt.Sprint(DefaultPullStallSeconds) + `}"`,
		`[ -n "${` + EnvProgressPath + `:-}" ]`,
		`$` + EnvProgressPath + `"`,
		`every="${` + EnvProgressInterval + `:-5}"`,
		`sa=` + ServiceAccountTokenDir + `;`,
		`exit ` + fmt.Sprint(PullStalledExitCode),
	}
	for _, s := range PullScripts() {
		for _, m := range must {
			if !strings.Contains(s.Text, m) {
				t.Errorf("%s does not contain %s", s.File, m)
			}
		}
	}
}

// TestPullScriptsShareTheirCommonParts keeps the copies of the parts every
// script has (the prologue, the progress functions, the epilogue, and the
// watchdog of the CLI pullers) equal, as when they were one Go constant.
func TestPullScriptsShareTheirCommonParts(t *testing.T) {
	// block is text from the first line starting with from to the end of
	// the first line after it that is exactly to.
	block := func(t *testing.T, file, text, from, to string) string {
		t.Helper()
		i := strings.Index("\n"+text, "\n"+from)
		if i < 0 {
			t.Fatalf("%s has no line starting %q", file, from)
		}
		text = text[i:]
		j := strings.Index(text, "\n"+to+"\n")
		if j < 0 {
			t.Fatalf("%s has no line %q after %q", file, to, from)
		}
		return text[:j+len(to)+2]
	}
	all, cli := []string{"gs", "hf", "http", "s3"}, []string{"gs", "hf", "s3"}
	parts := map[string]struct {
		from, to string
		files    []string
	}{
		"prologue": {"set -eu", `stall="${PULL_STALL_SECONDS:-300}"`, all},
		"progress": {"cr=$(printf", "  set +e; progress_report; set -e", all},
		"epilogue": {`printf '%s\n' "$MODEL_URI"`, `echo "pulled $MODEL_URI into $TARGET_DIR"`, all},
		"watchdog": {"watch() {", "}", cli},
		"sizes":    {"progress_bytes() { echo $(( $(du", `progress_total() { echo ""; }`, cli},
	}
	for name, p := range parts {
		var first, firstFile string
		for _, f := range p.files {
			file := "scripts/" + f + ".sh"
			got := block(t, file, pullScriptText(file), p.from, p.to)
			if firstFile == "" {
				first, firstFile = got, file
				continue
			}
			if diff := cmp.Diff(first, got); diff != "" {
				t.Errorf("the %s of %s differs from %s's (-%s +%s):\n%s", name, file, firstFile, firstFile, file, diff)
			}
		}
	}
	for _, s := range PullScripts() {
		if !strings.HasPrefix(s.Text, "set -eu\n") || !strings.HasSuffix(s.Text, "echo \"pulled $MODEL_URI into $TARGET_DIR\"\n") {
			t.Errorf("%s does not begin with the prologue and end with the epilogue", s.File)
		}
	}
}

// TestPullScriptTokens: a token is stable, names its file, and tells the
// scripts apart; its digest is the one `grep -v … | sha256sum` gives.
func TestPullScriptTokens(t *testing.T) {
	seen := map[string]string{}
	for _, s := range PullScripts() {
		tok := s.Token()
		if !strings.HasPrefix(tok, "<<script "+s.File+" sha256:") || len(tok) != len("<<script "+s.File+" sha256:")+12+2 {
			t.Errorf("%s: token %q", s.File, tok)
		}
		if other, ok := seen[tok]; ok {
			t.Errorf("%s and %s have the same token %s", s.File, other, tok)
		}
		seen[tok] = s.File
		if strings.Contains(s.Text, "# shellcheck ") {
			t.Errorf("%s: the text a Job runs has a shellcheck directive", s.File)
		}
	}
	if len(seen) != 4 {
		t.Errorf("%d scripts, want 4 (hf, s3, gs, http): %v", len(seen), seen)
	}
}

// The stand-ins for the CLIs the hf, s3 and gs pullers run in their
// images. Each logs how it was called (arguments and the environment the
// script sets for it) to $CALLS and fetches, with curl, what the real CLI
// would from an origin that serves a Hub, S3 or Cloud Storage layout at
// the endpoint the real CLI's variable names. They stand for the CLIs'
// contract with the script, not for the CLIs.
const (
	fakeHF = `#!/bin/sh
set -eu
printf 'hf %s HF_HUB_DOWNLOAD_TIMEOUT=%s HF_HUB_ETAG_TIMEOUT=%s\n' "$*" "$HF_HUB_DOWNLOAD_TIMEOUT" "$HF_HUB_ETAG_TIMEOUT" >> "$CALLS"
[ "$1" = download ] || exit 2
repo=$2; shift 2
rev=main; dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --revision) rev=$2; shift ;;
    --local-dir) dir=$2; shift ;;
    *) echo "hf: unexpected $1" >&2; exit 2 ;;
  esac
  shift
done
for f in $(curl -fsS "$HF_ENDPOINT/api/models/$repo/revision/$rev" | tr ',' '\n' | sed -n 's/.*"rfilename": *"\([^"]*\)".*/\1/p'); do
  curl -fsS -o "$dir/$f" "$HF_ENDPOINT/$repo/resolve/$rev/$f"
done
`
	fakeAWS = `#!/bin/sh
set -eu
printf 'aws %s AWS_RETRY_MODE=%s AWS_MAX_ATTEMPTS=%s\n' "$*" "$AWS_RETRY_MODE" "$AWS_MAX_ATTEMPTS" >> "$CALLS"
[ "$1 $2" = "s3 sync" ] || exit 2
shift 2
src=""; dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --only-show-errors) ;;
    --cli-connect-timeout|--cli-read-timeout) shift ;;
    s3://*) src=${1#s3://} ;;
    -*) echo "aws: unexpected $1" >&2; exit 2 ;;
    *) dir=$1 ;;
  esac
  shift
done
bucket=${src%%/*}; prefix=${src#"$bucket"}; prefix=${prefix#/}
for key in $(curl -fsS "$AWS_ENDPOINT_URL/$bucket?list-type=2&prefix=$prefix" | tr '<' '\n' | sed -n 's/^Key>//p'); do
  rel=${key#"$prefix"}; rel=${rel#/}
  mkdir -p "$dir/$(dirname "$rel")"
  curl -fsS -o "$dir/$rel" "$AWS_ENDPOINT_URL/$bucket/$key"
done
`
	fakeGcloud = `#!/bin/sh
set -eu
printf 'gcloud %s CLOUDSDK_STORAGE_MAX_RETRIES=%s CLOUDSDK_CORE_HTTP_TIMEOUT=%s\n' "$*" "$CLOUDSDK_STORAGE_MAX_RETRIES" "$CLOUDSDK_CORE_HTTP_TIMEOUT" >> "$CALLS"
case "$1 $2" in
  "auth activate-service-account") printf 'key file: %s\n' "$(cat "${3#--key-file=}")" >> "$CALLS"; exit 0 ;;
  "storage rsync") ;;
  *) exit 2 ;;
esac
[ "$3" = --recursive ] || exit 2
src=${4#gs://}; dir=$5
bucket=${src%%/*}; prefix=${src#"$bucket"}; prefix=${prefix#/}
api=$CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE
for name in $(curl -fsS "${api}storage/v1/b/$bucket/o?prefix=$prefix" | tr ',' '\n' | sed -n 's/.*"name": *"\([^"]*\)".*/\1/p'); do
  rel=${name#"$prefix"}; rel=${rel#/}
  curl -fsS -o "$dir/$rel" "${api}download/storage/v1/b/$bucket/o/$(printf '%s' "$name" | sed 's#/#%2F#g')?alt=media"
done
`
)

// TestPullScriptsAgainstLocalOrigins runs every built-in pull script with
// this machine's shells and curl against an origin on 127.0.0.1 (the hf,
// s3 and gs CLIs stood in for, above): the files land in TARGET_DIR, the
// marker names the URI, and a second run with the marker there is a no-op
// that asks the origin nothing.
func TestPullScriptsAgainstLocalOrigins(t *testing.T) {
	needCurl(t)
	bin := t.TempDir()
	for name, text := range map[string]string{"hf": fakeHF, "aws": fakeAWS, "gcloud": fakeGcloud} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}

	type origin struct {
		routes map[string]string // request URI → body
		mu     sync.Mutex
		asked  []string
	}
	serve := func(t *testing.T, o *origin) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			o.mu.Lock()
			o.asked = append(o.asked, r.Method+" "+r.URL.RequestURI())
			o.mu.Unlock()
			body, ok := o.routes[r.URL.RequestURI()]
			if !ok || r.Method != http.MethodGet {
				http.NotFound(w, r)
				return
			}
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv
	}

	cases := map[string]struct {
		scheme, uri string
		env         func(url string) []string
		routes      map[string]string
		want        map[string]string // TARGET_DIR's files (the marker aside)
		calls       []string          // $CALLS, TARGET_DIR and HOME written as such
	}{
		"hf: a Hub repository at a revision": {
			scheme: "hf", uri: "hf://org/model",
			env: func(url string) []string { return []string{"HF_ENDPOINT=" + url, "MODEL_REVISION=abc123"} },
			routes: map[string]string{
				"/api/models/org/model/revision/abc123":       `{"id":"org/model","sha":"abc123","siblings":[{"rfilename":"config.json"},{"rfilename":"model.safetensors"}]}`,
				"/org/model/resolve/abc123/config.json":       `{"model_type":"llama"}`,
				"/org/model/resolve/abc123/model.safetensors": "tensors",
				"/api/models/org/model/revision/main":         `{"siblings":[{"rfilename":"the-default-revision"}]}`,
			},
			want:  map[string]string{"config.json": `{"model_type":"llama"}`, "model.safetensors": "tensors"},
			calls: []string{"hf download org/model --revision abc123 --local-dir $TARGET_DIR HF_HUB_DOWNLOAD_TIMEOUT=60 HF_HUB_ETAG_TIMEOUT=60"},
		},
		"s3: a bucket prefix, with a sub-directory": {
			scheme: "s3", uri: "s3://models/llama/v1",
			env: func(url string) []string { return []string{"AWS_ENDPOINT_URL=" + url} },
			routes: map[string]string{
				"/models?list-type=2&prefix=llama/v1": `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>models</Name><Prefix>llama/v1</Prefix>` +
					`<Contents><Key>llama/v1/model.gguf</Key><Size>7</Size></Contents><Contents><Key>llama/v1/tokenizer/vocab.json</Key><Size>2</Size></Contents></ListBucketResult>`,
				"/models/llama/v1/model.gguf":           "weights",
				"/models/llama/v1/tokenizer/vocab.json": "{}",
			},
			want:  map[string]string{"model.gguf": "weights", "tokenizer/vocab.json": "{}"},
			calls: []string{"aws s3 sync --only-show-errors --cli-connect-timeout 30 --cli-read-timeout 60 s3://models/llama/v1 $TARGET_DIR AWS_RETRY_MODE=standard AWS_MAX_ATTEMPTS=10"},
		},
		"gs: a bucket prefix, with a service account key": {
			scheme: "gs", uri: "gs://models/llama",
			env: func(url string) []string {
				return []string{"CLOUDSDK_API_ENDPOINT_OVERRIDES_STORAGE=" + url + "/", `GOOGLE_CREDENTIALS_JSON={"type":"service_account"}`}
			},
			routes: map[string]string{
				"/storage/v1/b/models/o?prefix=llama":                           `{"kind":"storage#objects","items":[{"name":"llama/model.gguf"},{"name":"llama/config.json"}]}`,
				"/download/storage/v1/b/models/o/llama%2Fmodel.gguf?alt=media":  "weights",
				"/download/storage/v1/b/models/o/llama%2Fconfig.json?alt=media": "{}",
			},
			want: map[string]string{"model.gguf": "weights", "config.json": "{}"},
			calls: []string{
				"gcloud auth activate-service-account --key-file=$HOME/key.json CLOUDSDK_STORAGE_MAX_RETRIES=10 CLOUDSDK_CORE_HTTP_TIMEOUT=60",
				`key file: {"type":"service_account"}`,
				"gcloud storage rsync --recursive gs://models/llama $TARGET_DIR CLOUDSDK_STORAGE_MAX_RETRIES=10 CLOUDSDK_CORE_HTTP_TIMEOUT=60",
			},
		},
		"http: one file, the query left out of its name": {
			scheme: "http", uri: "/files/model.gguf?download=1",
			routes: map[string]string{"/files/model.gguf?download=1": "weights"},
			want:   map[string]string{"model.gguf": "weights"},
		},
	}
	for _, sh := range availableShells(t) {
		for name, tc := range cases {
			t.Run(strings.Join(sh, " ")+"/"+name, func(t *testing.T) {
				t.Parallel()
				o := &origin{routes: tc.routes}
				srv := serve(t, o)
				uri := tc.uri
				if tc.scheme == "http" {
					uri = srv.URL + uri
				}
				dir, home := filepath.Join(t.TempDir(), "weights"), t.TempDir()
				calls := filepath.Join(t.TempDir(), "calls")
				env := []string{"PATH=" + bin + ":" + os.Getenv("PATH"), "CALLS=" + calls, "TARGET_DIR=" + dir, "HOME=" + home}
				if tc.env != nil {
					env = append(env, tc.env(srv.URL)...)
				}

				code, out, _ := pullEnv(t, sh, tc.scheme, uri, env...)
				if code != 0 {
					t.Fatalf("exit %d\n%s", code, out)
				}
				got := map[string]string{}
				err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
					if err != nil || d.IsDir() {
						return err
					}
					b, err := os.ReadFile(path)
					rel, _ := filepath.Rel(dir, path)
					got[filepath.ToSlash(rel)] = string(b)
					return err
				})
				if err != nil {
					t.Fatal(err)
				}
				want := map[string]string{MarkerFile: uri + "\n"}
				for f, body := range tc.want {
					want[f] = body
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("TARGET_DIR (-want +got):\n%s\noutput:\n%s", diff, out)
				}
				b, _ := os.ReadFile(calls)
				var lines []string
				if c := strings.TrimSpace(strings.NewReplacer(dir, "$TARGET_DIR", home, "$HOME").Replace(string(b))); c != "" {
					lines = strings.Split(c, "\n")
				}
				if diff := cmp.Diff(tc.calls, lines); diff != "" {
					t.Errorf("the CLI's calls (-want +got):\n%s", diff)
				}

				// Again, with the marker there: nothing is fetched.
				o.mu.Lock()
				asked := len(o.asked)
				o.mu.Unlock()
				code, out, _ = pullEnv(t, sh, tc.scheme, uri, env...)
				if code != 0 || !strings.Contains(out, "already in") {
					t.Errorf("the second run: exit %d, want 0 saying the weights are already there\n%s", code, out)
				}
				o.mu.Lock()
				again := append([]string(nil), o.asked[asked:]...)
				o.mu.Unlock()
				if len(again) > 0 {
					t.Errorf("the second run asked the origin %q", again)
				}
			})
		}
	}
}
