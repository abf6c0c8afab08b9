package v1beta1

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// The built-in pull scripts, one file each in scripts/: hf.sh, s3.sh,
// gs.sh and http.sh (for http and https). They share one shape: skip when
// the marker exists, download, write the marker last. They are POSIX sh
// (dash, busybox ash and bash run them alike). The URI reaches them only
// through environment variables, never spliced into the script, so no URI
// can inject shell.
//
// Every download ends: curl stops a transfer slower than 1 KiB/s for
// PULL_STALL_SECONDS and retries it; the hf, s3 and gs CLIs get their own
// timeouts and retries, and a watchdog stops them once TARGET_DIR has not
// grown for PULL_STALL_SECONDS. A stall exits PullStalledExitCode; the
// Job's activeDeadlineSeconds bounds the rest.
//
// The common parts (the prologue, the watchdog, the progress reports, the
// epilogue) are written out in each file, so that each file is the script
// a Job runs, and a test keeps the copies equal. The constants they share
// with Go (MarkerFile, EnvPullStallSeconds, EnvProgressPath,
// EnvProgressInterval, ServiceAccountTokenDir) are spelled out too, and a
// test checks them.
//
// shellcheck checks every file (make test). A line that is a shellcheck
// directive — "# shellcheck shell=sh", or "# shellcheck disable=SCnnnn #
// why" above what it excuses — is for shellcheck alone: it is not part of
// the script a pull Job runs.
//
//go:embed scripts/*.sh
var pullScriptFiles embed.FS

// The built-in start scripts of runtime presets, one file each in
// scripts/serve/ (ollama.sh), kept apart from the pull scripts because
// they share none of their parts. Like them they are POSIX sh that busybox
// runs, shellcheck checks them, and their shellcheck directives are left
// out of what a server runs.
//
//go:embed scripts/serve/*.sh
var serveScriptFiles embed.FS

// pullScripts are the scripts' texts as Jobs run them, by file;
// serveScripts the start scripts' as servers run them.
var (
	pullScripts  = loadScripts(pullScriptFiles, "scripts/*.sh")
	serveScripts = loadScripts(serveScriptFiles, "scripts/serve/*.sh")
)

func loadScripts(fsys embed.FS, glob string) map[string]string {
	files, err := fs.Glob(fsys, glob)
	if err != nil {
		panic(err)
	}
	out := make(map[string]string, len(files))
	for _, f := range files {
		b, err := fsys.ReadFile(f)
		if err != nil {
			panic(err)
		}
		var text strings.Builder
		for line := range strings.Lines(string(b)) {
			if !isShellcheckDirective(line) {
				text.WriteString(line)
			}
		}
		out[f] = text.String()
	}
	return out
}

// isShellcheckDirective says whether a line of a script is a shellcheck
// directive rather than a part of the script.
func isShellcheckDirective(line string) bool {
	return strings.HasPrefix(strings.TrimLeft(line, " \t"), "# shellcheck ")
}

// pullScriptText is the text of a built-in pull script as a Job runs it.
func pullScriptText(file string) string {
	text, ok := pullScripts[file]
	if !ok {
		panic(fmt.Sprintf("no built-in pull script %s", file))
	}
	return text
}

// serveScriptText is the text of a built-in start script as a server
// runs it.
func serveScriptText(file string) string {
	text, ok := serveScripts[file]
	if !ok {
		panic(fmt.Sprintf("no built-in start script %s", file))
	}
	return text
}

// PullScript is a built-in script: a pull script, or a runtime preset's
// start script (ServeScripts).
type PullScript struct {
	// File is its path under input/v1beta1, e.g. scripts/hf.sh.
	File string
	// Text is what a pull Job (or a server) runs: the file without its
	// shellcheck directives.
	Text string
}

// Token is a short stable name for the script's text as a Job runs it:
// the file and the first 12 hex digits of the text's SHA-256, e.g.
// <<script scripts/hf.sh sha256:0123456789ab>>. fn's golden files show it
// in the script's place, so that a script edit changes one line of each
// and the script itself is reviewed once, in its file. The digest is of
// the file without its shellcheck directives:
//
//	grep -v '^[[:space:]]*# shellcheck ' input/v1beta1/scripts/hf.sh | sha256sum
func (s PullScript) Token() string {
	sum := sha256.Sum256([]byte(s.Text))
	return "<<script " + s.File + " sha256:" + hex.EncodeToString(sum[:])[:12] + ">>"
}

// PullScripts returns every built-in pull script, in file name order.
func PullScripts() []PullScript { return scriptList(pullScripts) }

// ServeScripts returns every runtime preset's built-in start script, in
// file name order.
func ServeScripts() []PullScript { return scriptList(serveScripts) }

func scriptList(scripts map[string]string) []PullScript {
	out := make([]PullScript, 0, len(scripts))
	for f, text := range scripts {
		out = append(out, PullScript{File: f, Text: text})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File < out[j].File })
	return out
}
