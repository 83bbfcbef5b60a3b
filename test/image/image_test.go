package image

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// root is the repository root, relative to this package.
var root = filepath.Join("..", "..")

// manifest is one entry of the tarball's manifest.json.
type manifest struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// imageConfig is the part of the OCI image configuration the test reads.
type imageConfig struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// buildImage runs `make image` into a temporary tarball and returns its
// path.
func buildImage(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"make", "go", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			msg := tool + " is not on PATH: make image needs it"
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
	}
	out := filepath.Join(t.TempDir(), "steward-image.tar")
	cmd := exec.Command("make", "--no-print-directory", "image", "IMAGE_OUT="+out, "IMAGE_ARCH="+runtime.GOARCH)
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make image: %v\n%s", err, output)
	}
	return out
}

// readTarball returns the files of a tar file by name.
func readTarball(t *testing.T, path string) map[string][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files, err := readTar(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return files
}

// readTar reads the regular files of a tar stream, and records every other
// entry (directories) with a nil body.
func readTar(r io.Reader) (map[string][]byte, error) {
	files := map[string][]byte{}
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		var data []byte
		if hdr.Typeflag == tar.TypeReg {
			if data, err = io.ReadAll(tr); err != nil {
				return nil, err
			}
		}
		files[strings.TrimPrefix(hdr.Name, "./")] = data
	}
}

// layerEntries reads a gzip-compressed layer into its headers and files.
func layerEntries(t *testing.T, blob []byte) (map[string]*tar.Header, map[string][]byte) {
	t.Helper()
	zr, err := gzip.NewReader(strings.NewReader(string(blob)))
	if err != nil {
		t.Fatalf("layer is not gzip-compressed: %v", err)
	}
	headers := map[string]*tar.Header{}
	files := map[string][]byte{}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return headers, files
		}
		if err != nil {
			t.Fatalf("layer: %v", err)
		}
		name := strings.TrimSuffix(strings.TrimPrefix(hdr.Name, "./"), "/")
		headers[name] = hdr
		if hdr.Typeflag == tar.TypeReg {
			data, err := io.ReadAll(tr)
			if err != nil {
				t.Fatalf("layer %s: %v", name, err)
			}
			files[name] = data
		}
	}
}

// chartAppVersion reads appVersion from charts/steward/Chart.yaml.
func chartAppVersion(t *testing.T) string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "charts", "steward", "Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "appVersion:"); ok {
			return strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	t.Fatal("no appVersion in charts/steward/Chart.yaml")
	return ""
}

// TestImage_RunsTheStaticBinaryAsNonRoot builds the image the way a user
// does and checks what docker load, kind load and the kubelet read from it.
func TestImage_RunsTheStaticBinaryAsNonRoot(t *testing.T) {
	tarball := buildImage(t)
	files := readTarball(t, tarball)

	var manifests []manifest
	if err := json.Unmarshal(files["manifest.json"], &manifests); err != nil {
		t.Fatalf("manifest.json: %v", err)
	}
	if len(manifests) != 1 {
		t.Fatalf("%d images in the tarball, want 1", len(manifests))
	}
	m := manifests[0]
	wantTag := "ghcr.io/steward-oam/steward:" + chartAppVersion(t)
	if !slices.Equal(m.RepoTags, []string{wantTag}) {
		t.Errorf("RepoTags %v, want [%s] (the chart's default image)", m.RepoTags, wantTag)
	}

	var cfg imageConfig
	if err := json.Unmarshal(files[m.Config], &cfg); err != nil {
		t.Fatalf("config %s: %v", m.Config, err)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	if !slices.Equal(cfg.Config.Entrypoint, []string{"/steward"}) || !slices.Equal(cfg.Config.Cmd, []string{"controller"}) {
		t.Errorf("entrypoint %q, cmd %q; want [/steward] [controller]", cfg.Config.Entrypoint, cfg.Config.Cmd)
	}
	// runAsNonRoot needs a numeric user other than 0, with a group.
	uid, gid, ok := strings.Cut(cfg.Config.User, ":")
	if n, err := strconv.Atoi(uid); !ok || err != nil || n == 0 {
		t.Errorf("user %q: want a numeric non-root uid:gid", cfg.Config.User)
	} else if _, err := strconv.Atoi(gid); err != nil {
		t.Errorf("user %q: group is not numeric", cfg.Config.User)
	}
	for label, want := range map[string]string{
		"org.opencontainers.image.source":  "https://github.com/steward-oam/steward",
		"org.opencontainers.image.version": chartAppVersion(t),
	} {
		if got := cfg.Config.Labels[label]; got != want {
			t.Errorf("label %s = %q, want %q", label, got, want)
		}
	}
	commit := headCommit()
	if rev := cfg.Config.Labels["org.opencontainers.image.revision"]; rev != commit {
		t.Errorf("label org.opencontainers.image.revision = %q, want the commit %q", rev, commit)
	}

	if len(m.Layers) != 1 || len(cfg.RootFS.DiffIDs) != 1 {
		t.Fatalf("%d layers (%d diff IDs), want 1 on an empty base", len(m.Layers), len(cfg.RootFS.DiffIDs))
	}
	headers, layer := layerEntries(t, files[m.Layers[0]])
	bin := headers["steward"]
	if bin == nil || bin.Typeflag != tar.TypeReg {
		t.Fatalf("no /steward in the layer; it holds %v", keys(headers))
	}
	if bin.Mode&0o111 == 0 || bin.Mode&0o022 != 0 {
		t.Errorf("/steward mode %o: want executable and writable by its owner only", bin.Mode)
	}
	if tmp := headers["tmp"]; tmp == nil || tmp.Typeflag != tar.TypeDir || tmp.Mode&0o1777 != 0o1777 {
		t.Errorf("no world-writable sticky /tmp in the layer")
	}

	// The binary from the layer runs on its own: static, no loader, no
	// shared libraries.
	path := filepath.Join(t.TempDir(), "steward")
	if err := os.WriteFile(path, layer["steward"], 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := elf.Open(path)
	if err != nil {
		t.Fatalf("/steward is not an ELF binary: %v", err)
	}
	for _, p := range exe.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("/steward is dynamically linked (%v): the empty base has no libc", p.Type)
		}
	}
	exe.Close()
	out, err := exec.Command(path, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("steward version from the image: %v\n%s", err, out)
	}
	var v struct {
		Version, Commit string
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("steward version -o json: %v\n%s", err, out)
	}
	if commit == "" {
		t.Logf("not a git checkout: steward version says %+v, stamping not checked", v)
		return
	}
	if v.Commit != commit || v.Version == "" || v.Version == "unknown" {
		t.Errorf("steward version in the image says %+v; want the stamped version and commit %s", v, commit)
	}
}

// headCommit is the commit `make image` stamps: HEAD, or "" outside a git
// checkout.
func headCommit() string {
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
