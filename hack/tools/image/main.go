// Command image packs a static steward binary into a container image and
// writes it as a tarball that `docker load -i` and `kind load image-archive`
// accept. `make image` runs it; it needs neither Docker nor a registry.
//
// The image has one layer on an empty base, so nothing is pulled and the
// image holds nothing but:
//
//	/steward      the binary (root-owned, 0755)
//	/etc/passwd   the nonroot user, 65532, that the image runs as
//	/etc/group
//	/tmp          world-writable, sticky
//
// Its entrypoint is ["/steward"] and its default arguments ["controller"],
// so `docker run IMAGE` runs the controller (what the image is for) while
// `docker run IMAGE version` runs any other subcommand. The Helm chart sets
// both command and args itself.
//
// The tarball is Docker's `docker save` layout (manifest.json with
// RepoTags), written by go-containerregistry's tarball package. File times
// and the image's creation time are --created, so the same binary and flags
// give the same image.
//
// Usage:
//
//	image --binary bin/image/steward --tag ghcr.io/steward-oam/steward:0.1.0 \
//		--version 0.1.0 --revision "$(git rev-parse HEAD)" --out bin/steward-image.tar
package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// nonroot is the user and group the image runs as: distroless's "nonroot",
// which Kubernetes' runAsNonRoot accepts because it is numeric.
const nonroot = 65532

// options are the command's flags.
type options struct {
	binary   string
	out      string
	tag      string
	version  string
	revision string
	source   string
	arch     string
	created  int64
}

func main() {
	var o options
	flag.StringVar(&o.binary, "binary", "", "static steward binary for linux/--arch (CGO_ENABLED=0)")
	flag.StringVar(&o.out, "out", "bin/steward-image.tar", "tarball to write")
	flag.StringVar(&o.tag, "tag", "", "image name and tag recorded in the tarball, e.g. ghcr.io/steward-oam/steward:0.1.0")
	flag.StringVar(&o.version, "version", "", "org.opencontainers.image.version label")
	flag.StringVar(&o.revision, "revision", "", "org.opencontainers.image.revision label (the commit)")
	flag.StringVar(&o.source, "source", "https://github.com/steward-oam/steward", "org.opencontainers.image.source label")
	flag.StringVar(&o.arch, "arch", runtime.GOARCH, "architecture the binary was built for (GOARCH)")
	flag.Int64Var(&o.created, "created", 0, "creation time, in seconds since the epoch (SOURCE_DATE_EPOCH, the commit time)")
	flag.Parse()
	if err := run(o); err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(o options) error {
	if o.binary == "" || o.tag == "" {
		return errors.New("--binary and --tag are required")
	}
	tag, err := name.NewTag(o.tag, name.StrictValidation)
	if err != nil {
		return fmt.Errorf("--tag %q: %w", o.tag, err)
	}
	bin, err := os.ReadFile(o.binary)
	if err != nil {
		return err
	}
	created := time.Unix(o.created, 0).UTC()
	img, err := build(bin, created, o)
	if err != nil {
		return err
	}
	if err := tarball.WriteToFile(o.out, tag, img); err != nil {
		return fmt.Errorf("writing %s: %w", o.out, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("wrote %s: %s (%s, linux/%s)\n", o.out, tag, digest, o.arch)
	return nil
}

// build returns the image: the layer of files, then the configuration.
func build(bin []byte, created time.Time, o options) (v1.Image, error) {
	layerTar, err := layerFiles(bin, created)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	}, tarball.WithMediaType(types.OCILayer))
	if err != nil {
		return nil, fmt.Errorf("layer: %w", err)
	}
	base := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	base = mutate.ConfigMediaType(base, types.OCIConfigJSON)
	img, err := mutate.Append(base, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Author:    "make image",
			Created:   v1.Time{Time: created},
			CreatedBy: "hack/tools/image: /steward, /etc/passwd, /etc/group, /tmp",
			Comment:   "the static steward binary",
		},
	})
	if err != nil {
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cfg = cfg.DeepCopy()
	cfg.OS = "linux"
	cfg.Architecture = o.arch
	cfg.Created = v1.Time{Time: created}
	cfg.Config.Entrypoint = []string{"/steward"}
	cfg.Config.Cmd = []string{"controller"}
	cfg.Config.User = fmt.Sprintf("%d:%d", nonroot, nonroot)
	cfg.Config.WorkingDir = "/"
	cfg.Config.Labels = map[string]string{
		"org.opencontainers.image.title":       "steward",
		"org.opencontainers.image.description": "Steward, an OAM application delivery controller",
		"org.opencontainers.image.source":      o.source,
		"org.opencontainers.image.version":     o.version,
		"org.opencontainers.image.revision":    o.revision,
		"org.opencontainers.image.licenses":    "Apache-2.0",
	}
	return mutate.ConfigFile(img, cfg)
}

// layerFiles returns the uncompressed tar of the image's only layer.
func layerFiles(bin []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:%d:%d:nonroot:/home/nonroot:/sbin/nologin\n", nonroot, nonroot)
	group := fmt.Sprintf("root:x:0:\nnonroot:x:%d:\n", nonroot)
	entries := []struct {
		hdr  tar.Header
		data []byte
	}{
		{tar.Header{Typeflag: tar.TypeDir, Name: "etc/", Mode: 0o755}, nil},
		{tar.Header{Typeflag: tar.TypeReg, Name: "etc/group", Mode: 0o644}, []byte(group)},
		{tar.Header{Typeflag: tar.TypeReg, Name: "etc/passwd", Mode: 0o644}, []byte(passwd)},
		{tar.Header{Typeflag: tar.TypeReg, Name: "steward", Mode: 0o755}, bin},
		{tar.Header{Typeflag: tar.TypeDir, Name: "tmp/", Mode: 0o1777}, nil},
	}
	for _, e := range entries {
		hdr := e.hdr
		hdr.Size = int64(len(e.data))
		hdr.ModTime = mtime
		hdr.Format = tar.FormatPAX
		if err := tw.WriteHeader(&hdr); err != nil {
			return nil, err
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
