// Package images writes container images as docker-archive tarballs
// without a Docker engine: a single layer of files on an empty base, with
// go-containerregistry. The end-to-end test builds every image a real pod
// or package needs this way — the function's runtime image, the pause
// image, the fake model server, the http puller — and imports them into
// containerd or embeds them in a package; nothing is ever pulled.
package images

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// NonRoot is the uid:gid of distroless' "nonroot", which every image the
// project ships runs as.
const NonRoot = "65532:65532"

// File is one entry of an image's layer.
type File struct {
	// Path inside the image, absolute.
	Path string
	// Data is a regular file's content.
	Data []byte
	// Mode is the permission bits; 0 means 0o644 for files, 0o755 for
	// directories.
	Mode int64
	// Link, when set, makes the entry a symbolic link to Link.
	Link string
	// Dir makes the entry a directory.
	Dir bool
}

// Spec is an image to write.
type Spec struct {
	// Tag the image carries in the tarball, e.g.
	// ghcr.io/inferno-ai/fake-model-server:v0.1.0: what containerd lists
	// after an import and what a pod's image field must name.
	Tag        string
	Files      []File
	Entrypoint []string
	Cmd        []string
	Env        []string
	User       string
	// Ports are exposed ports, e.g. "8080/tcp".
	Ports []string
}

// Write writes the image as a docker-archive tarball at out, readable by
// `ctr images import`, `docker load` and `crane push`.
func Write(s Spec, out string) error {
	layer, err := Layer(s.Files)
	if err != nil {
		return err
	}
	img, err := mutate.AppendLayers(empty.Image, layer)
	if err != nil {
		return err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return err
	}
	cfg = cfg.DeepCopy()
	cfg.OS, cfg.Architecture = "linux", "amd64"
	cfg.Config.Entrypoint = s.Entrypoint
	cfg.Config.Cmd = s.Cmd
	cfg.Config.Env = s.Env
	cfg.Config.User = s.User
	if len(s.Ports) > 0 {
		cfg.Config.ExposedPorts = map[string]struct{}{}
		for _, p := range s.Ports {
			cfg.Config.ExposedPorts[p] = struct{}{}
		}
	}
	if img, err = mutate.ConfigFile(img, cfg); err != nil {
		return err
	}
	ref, err := name.NewTag(s.Tag)
	if err != nil {
		return err
	}
	return tarball.WriteToFile(out, ref, img)
}

// Layer makes one layer of files. Parent directories are added as needed;
// entries are sorted and stamped with a fixed time, so the same files give
// the same digest.
func Layer(files []File) (v1.Layer, error) {
	all := map[string]File{}
	for _, f := range files {
		p := path.Clean("/" + f.Path)
		f.Path = p
		all[p] = f
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := all[d]; !ok {
				all[d] = File{Path: d, Dir: true}
			}
		}
	}
	paths := make([]string, 0, len(all))
	for p := range all {
		paths = append(paths, p)
	}
	sort.Strings(paths)

	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, p := range paths {
		f := all[p]
		h := &tar.Header{Name: strings.TrimPrefix(p, "/"), ModTime: time.Unix(0, 0), Mode: f.Mode}
		switch {
		case f.Dir:
			h.Typeflag, h.Name = tar.TypeDir, h.Name+"/"
			if h.Mode == 0 {
				h.Mode = 0o755
			}
		case f.Link != "":
			h.Typeflag, h.Linkname = tar.TypeSymlink, f.Link
			h.Mode = 0o777
		default:
			h.Typeflag, h.Size = tar.TypeReg, int64(len(f.Data))
			if h.Mode == 0 {
				h.Mode = 0o644
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, err
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(f.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	b := buf.Bytes()
	return tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil })
}

// Binary is a static executable of this machine at dst in the image.
func Binary(src, dst string) (File, error) {
	b, err := os.ReadFile(src)
	if err != nil {
		return File{}, err
	}
	return File{Path: dst, Data: b, Mode: 0o755}, nil
}

// HostProgram copies a dynamically linked program of this machine into an
// image at the same path, with every shared library it loads (as ldd
// resolves them) and its ELF interpreter: enough to run it from an empty
// base. Debian's packages are the source, so an image made of them runs
// exactly the program the machine has.
func HostProgram(program string) ([]File, error) {
	real, err := filepath.EvalSymlinks(program)
	if err != nil {
		return nil, err
	}
	deps := []string{program}
	if interp, err := interpreter(real); err != nil {
		return nil, err
	} else if interp != "" {
		deps = append(deps, interp)
	}
	out, err := exec.Command("ldd", real).Output()
	if err != nil {
		return nil, fmt.Errorf("ldd %s: %w", program, err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		// "libz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x…)" or
		// "/lib64/ld-linux-x86-64.so.2 (0x…)"; linux-vdso has no file.
		fields := strings.Fields(line)
		for i, f := range fields {
			if strings.HasPrefix(f, "/") && (i == 0 || fields[i-1] == "=>") {
				deps = append(deps, f)
			}
		}
	}
	var files []File
	seen := map[string]bool{}
	for _, d := range deps {
		if seen[d] {
			continue
		}
		seen[d] = true
		b, err := os.ReadFile(d) // follows symlinks: the file lands under the name the loader asks for
		if err != nil {
			return nil, err
		}
		files = append(files, File{Path: d, Data: b, Mode: 0o755})
	}
	return files, nil
}

func interpreter(program string) (string, error) {
	f, err := elf.Open(program)
	if err != nil {
		return "", fmt.Errorf("%s: %w", program, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b, err := io.ReadAll(p.Open())
			if err != nil {
				return "", err
			}
			return strings.TrimRight(string(b), "\x00"), nil
		}
	}
	return "", nil
}

// Busybox is Debian's static busybox at /bin/busybox with the applets a
// shell script needs linked beside it in /bin: a shell and coreutils in
// about 2 MiB.
func Busybox(src string, applets ...string) ([]File, error) {
	bb, err := Binary(src, "/bin/busybox")
	if err != nil {
		return nil, err
	}
	files := []File{bb}
	for _, a := range applets {
		files = append(files, File{Path: "/bin/" + a, Link: "busybox"})
	}
	return files, nil
}

// Config reads the config of the single image in a tarball, so a test can
// assert what Write produced.
func Config(tarPath string) (*v1.ConfigFile, error) {
	img, err := tarball.ImageFromPath(tarPath, nil)
	if err != nil {
		return nil, err
	}
	return img.ConfigFile()
}
