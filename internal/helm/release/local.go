package release

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"

	"github.com/steward-oam/steward/internal/helm/chart"
	"github.com/steward-oam/steward/internal/helm/fetch"
)

// isLocal reports whether a chart source names a path: not a URL, not an
// oci:// reference, and present on disk.
func isLocal(source string) bool {
	if strings.Contains(source, "://") {
		return false
	}
	_, err := os.Stat(source)
	return err == nil
}

// localChart reads a chart archive, or packages a chart directory (its
// .helmignore honoured) as `helm package` does.
func localChart(path string) (*fetch.Fetched, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var archive []byte
	if info.IsDir() {
		c, err := loader.LoadDir(path)
		if err != nil {
			return nil, fmt.Errorf("chart directory %s: %w", path, err)
		}
		tmp, err := os.MkdirTemp("", "steward-chart-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		file, err := chartutil.Save(c, tmp)
		if err != nil {
			return nil, fmt.Errorf("packaging %s: %w", path, err)
		}
		if archive, err = os.ReadFile(file); err != nil {
			return nil, err
		}
	} else {
		if info.Size() > chart.MaxArchiveBytes {
			return nil, fmt.Errorf("%s is %d bytes, more than the %d a chart may be", path, info.Size(), chart.MaxArchiveBytes)
		}
		if archive, err = os.ReadFile(filepath.Clean(path)); err != nil {
			return nil, err
		}
	}
	sum := sha256.Sum256(archive)
	return &fetch.Fetched{Archive: archive, Digest: "sha256:" + hex.EncodeToString(sum[:])}, nil
}
