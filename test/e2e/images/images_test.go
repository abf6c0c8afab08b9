package images

import (
	"archive/tar"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLayerAddsParentsInOrder: a layer lists every parent directory before
// its children, in sorted order, so runtimes that unpack entry by entry
// never meet a file whose directory is missing.
func TestLayerAddsParentsInOrder(t *testing.T) {
	l, err := Layer([]File{
		{Path: "/usr/bin/curl", Data: []byte("x"), Mode: 0o755},
		{Path: "/bin/sh", Link: "busybox"},
		{Path: "/bin/busybox", Data: []byte("y"), Mode: 0o755},
	})
	if err != nil {
		t.Fatal(err)
	}
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var got []string
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, h.Name)
	}
	want := []string{"bin/", "bin/busybox", "bin/sh", "usr/", "usr/bin/", "usr/bin/curl"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layer entries (-want +got):\n%s", diff)
	}
}

// TestLayerDigestStable: the same files give the same digest, so a
// rebuilt image is recognised as unchanged.
func TestLayerDigestStable(t *testing.T) {
	files := []File{{Path: "/a", Data: []byte("1")}, {Path: "/b/c", Data: []byte("2")}}
	l1, err := Layer(files)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := Layer([]File{files[1], files[0]})
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := l1.Digest()
	d2, _ := l2.Digest()
	if d1 != d2 {
		t.Errorf("digests differ for the same files: %s, %s", d1, d2)
	}
}

func TestWriteConfig(t *testing.T) {
	out := filepath.Join(t.TempDir(), "img.tar")
	spec := Spec{Tag: "example.invalid/tool:1", Files: []File{{Path: "/x", Data: []byte("x"), Mode: 0o755}},
		Entrypoint: []string{"/x"}, User: NonRoot, Ports: []string{"8080/tcp"}, Env: []string{"A=b"}}
	if err := Write(spec, out); err != nil {
		t.Fatal(err)
	}
	cfg, err := Config(out)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"/x"}, cfg.Config.Entrypoint); diff != "" {
		t.Error(diff)
	}
	if cfg.Config.User != NonRoot || cfg.Config.Env[0] != "A=b" {
		t.Errorf("user %q env %q", cfg.Config.User, cfg.Config.Env)
	}
	if _, ok := cfg.Config.ExposedPorts["8080/tcp"]; !ok {
		t.Errorf("ports %v", cfg.Config.ExposedPorts)
	}
}

// TestHostProgramRuns: the files HostProgram collects are enough to run
// the program from an otherwise empty root (needs root for chroot).
func TestHostProgramRuns(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chroot needs root")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl on this machine")
	}
	files, err := HostProgram(curl)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	for _, f := range files {
		p := filepath.Join(root, f.Path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, os.FileMode(f.Mode)); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("chroot", root, curl, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("curl in an empty root: %v\n%s", err, out)
	}
}
