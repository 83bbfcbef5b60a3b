package release

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	rcommon "helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/steward-oam/steward/api/v1beta1"
	"github.com/steward-oam/steward/internal/boundary"
	"github.com/steward-oam/steward/internal/helm/chart"
)

// Helm's release records are Secrets of this type, named
// sh.helm.release.v1.<release>.v<revision>, labelled owner=helm, name,
// status and version, whose data.release is the release as gzipped JSON
// in base64 (Helm's storage/driver "secrets"). Steward writes them with
// its own client, as that driver takes a typed clientset, so that
// `helm list` and `helm history` show the releases it delivers.
const (
	releaseType = "helm.sh/release.v1"
	// labelFingerprint is the fingerprint of the release's inputs, so
	// that a render of the same chart and values adds no revision.
	labelFingerprint = "steward.oam.dev/fingerprint"
)

// Input is one revision to record.
type Input struct {
	Name, Namespace string
	Chart           *chartv2.Metadata
	Values          map[string]any
	Manifest        string
	Notes           string
	Fingerprint     string
	MaxHistory      int
	// Labels are added to the record (the Application's ownership labels).
	// Their v1beta1.LabelAppName and LabelAppNamespace say whose records
	// of the name are Steward's for this Application: see owns.
	Labels map[string]string
	// Boundary is the Application's: a release `helm install` made is
	// taken over only inside it (see adopt).
	Boundary boundary.Boundary
}

// Input is the revision to record of what p prepared, whose chart
// rendered manifest, with the Application's labels and boundary.
func (p *Prepared) Input(manifest string, labels map[string]string, b boundary.Boundary) (Input, error) {
	md, err := chart.Metadata(p.Action.Archive)
	if err != nil {
		return Input{}, err
	}
	var values map[string]any
	if err := json.Unmarshal(p.Action.Values, &values); err != nil {
		return Input{}, err
	}
	return Input{Name: p.Release, Namespace: p.Namespace, Chart: md, Values: values, Manifest: manifest,
		Fingerprint: p.Fingerprint, MaxHistory: p.MaxHistory, Labels: labels, Boundary: b}, nil
}

// ErrForeignRelease is returned (wrapped, naming the release) by Record
// when the newest record of a release was written for another
// Application. Steward then writes no record and leaves theirs alone. (A
// release `helm install` made is taken over instead: see adopt.)
var ErrForeignRelease = errors.New("a release of that name belongs to another Application; Steward writes no record of it and leaves theirs alone")

// owns reports whether s is a record Steward wrote for the Application
// that owner's labels name: it carries the same app.oam.dev/name and
// app.oam.dev/namespace. An owner without them owns nothing.
func owns(s corev1.Secret, owner map[string]string) bool {
	name, ns := owner[v1beta1.LabelAppName], owner[v1beta1.LabelAppNamespace]
	return name != "" && ns != "" && s.Labels[v1beta1.LabelAppName] == name && s.Labels[v1beta1.LabelAppNamespace] == ns
}

// owned returns the records of history that owner owns, in order.
func owned(history []corev1.Secret, owner map[string]string) []corev1.Secret {
	var out []corev1.Secret
	for _, s := range history {
		if owns(s, owner) {
			out = append(out, s)
		}
	}
	return out
}

func foreignRelease(name, namespace string) error {
	return fmt.Errorf("helm release %q in namespace %q: %w", name, namespace, ErrForeignRelease)
}

func secretName(name string, version int) string {
	return fmt.Sprintf("sh.helm.release.v1.%s.v%d", name, version)
}

// History returns a release's records, oldest first.
func History(ctx context.Context, c client.Reader, name, namespace string) ([]corev1.Secret, error) {
	var list corev1.SecretList
	if err := c.List(ctx, &list, client.InNamespace(namespace), client.MatchingLabels{"owner": "helm", "name": name}); err != nil {
		return nil, err
	}
	items := slices.DeleteFunc(list.Items, func(s corev1.Secret) bool { return string(s.Type) != releaseType })
	slices.SortFunc(items, func(a, b corev1.Secret) int { return version(a) - version(b) })
	return items, nil
}

func version(s corev1.Secret) int {
	v, _ := strconv.Atoi(s.Labels["version"])
	return v
}

// Record writes a new revision of a release, status pending-install or
// pending-upgrade, unless the newest already has in's fingerprint. It
// returns the revision that stands for in.
//
// Only records owned by in.Labels' Application (see owns) are Steward's.
// When the newest record of the name is one `helm install` wrote (no
// Application's labels), the release is taken over (adopt, inside
// in.Boundary) and its history continues, whatever chart it was made
// from; so are the objects Helm made for it that the chart renders now
// (AdoptObjects, from in.Manifest). When it is another Application's,
// Record returns
// ErrForeignRelease and writes, prunes and bumps nothing. MaxHistory
// prunes only the Application's own records.
//
// A newest record of in's fingerprint that no longer decodes (edited by
// hand) is written again in place; one deleted by hand is written again
// as the next revision of what is left (see Check).
func Record(ctx context.Context, c client.Client, in Input) (int, error) {
	history, err := History(ctx, c, in.Name, in.Namespace)
	if err != nil {
		return 0, err
	}
	rev := 1
	var corrupt *corev1.Secret
	if n := len(history); n > 0 {
		last := history[n-1]
		if !owns(last, in.Labels) {
			if !unclaimed(last) {
				return 0, foreignRelease(in.Name, in.Namespace)
			}
			if history, err = adopt(ctx, c, in.Boundary, in.Name, in.Namespace, history, in.Labels); err != nil {
				return 0, err
			}
			last = history[n-1]
		}
		if tookOver(history) && in.Manifest != "" {
			objs, err := ManifestObjects(in.Manifest)
			if err == nil {
				_, err = AdoptObjects(ctx, c, in.Boundary, in.Name, in.Namespace, objs, in.Labels)
			}
			if err != nil {
				return 0, err
			}
		}
		rev = version(last) + 1
		if last.Labels[labelFingerprint] == in.Fingerprint {
			if intact(last, in.Name, version(last)) {
				return version(last), nil
			}
			rev, corrupt = version(last), &last
			history = history[:n-1]
		}
	}
	now := time.Now()
	status, desc := rcommon.StatusPendingInstall, "Install complete"
	if rev > 1 {
		status, desc = rcommon.StatusPendingUpgrade, "Upgrade complete"
	}
	rel := &releasev1.Release{
		Name: in.Name, Namespace: in.Namespace, Version: rev,
		Chart: &chartv2.Chart{Metadata: in.Chart}, Config: in.Values, Manifest: in.Manifest,
		Info:        &releasev1.Info{FirstDeployed: now, LastDeployed: now, Status: status, Description: desc, Notes: in.Notes},
		ApplyMethod: string(releasev1.ApplyMethodServerSideApply),
	}
	own := owned(history, in.Labels)
	if len(own) > 0 {
		if first, err := decode(own[0]); err == nil && first.Info != nil {
			rel.Info.FirstDeployed = first.Info.FirstDeployed
		}
	}
	sec, err := encode(rel)
	if err != nil {
		return 0, err
	}
	for k, v := range in.Labels {
		sec.Labels[k] = v
	}
	sec.Labels[labelFingerprint] = in.Fingerprint
	sec.Labels["createdAt"] = strconv.FormatInt(now.Unix(), 10)
	if corrupt != nil {
		// The record of this revision no longer decodes: its body and
		// labels are written again over it.
		corrupt.Labels, corrupt.Data = sec.Labels, sec.Data
		if err := c.Update(ctx, corrupt); err != nil {
			return 0, fmt.Errorf("writing release record %s again: %w", sec.Name, err)
		}
		return rev, nil
	}
	if err := c.Create(ctx, sec); apierrors.IsAlreadyExists(err) {
		// Written since History was read: by a reconcile of ours, fine;
		// by anyone else (or a Secret that is no release record), theirs.
		var got corev1.Secret
		if err := c.Get(ctx, client.ObjectKeyFromObject(sec), &got); err != nil {
			return 0, err
		}
		if string(got.Type) != releaseType || !owns(got, in.Labels) {
			return 0, foreignRelease(in.Name, in.Namespace)
		}
		if !intact(got, in.Name, rev) {
			// Ours, but its Helm labels (which History lists by) or its
			// body were edited by hand: written again.
			got.Labels, got.Data = sec.Labels, sec.Data
			if err := c.Update(ctx, &got); err != nil {
				return 0, fmt.Errorf("writing release record %s again: %w", sec.Name, err)
			}
		}
	} else if err != nil {
		return 0, err
	}
	// Helm's --history-max: the oldest of the Application's own records
	// beyond it go; nobody else's are touched.
	if in.MaxHistory > 0 {
		for i := 0; i < len(own)+1-in.MaxHistory && i < len(own); i++ {
			if err := c.Delete(ctx, &own[i]); err != nil && !apierrors.IsNotFound(err) {
				return rev, err
			}
		}
	}
	return rev, nil
}

// Deployed marks revision rev of a release deployed and the revisions
// before it superseded, once the version that delivers it is applied.
// Only records owner owns (the Application's labels, see owns) are
// changed.
func Deployed(ctx context.Context, c client.Client, name, namespace string, rev int, owner map[string]string) error {
	var history []corev1.Secret
	if rev == 1 {
		// A first install has no revision to supersede: one read.
		var s corev1.Secret
		if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: secretName(name, rev)}, &s); err != nil {
			return client.IgnoreNotFound(err)
		}
		if string(s.Type) != releaseType {
			return nil
		}
		history = []corev1.Secret{s}
	} else {
		var err error
		if history, err = History(ctx, c, name, namespace); err != nil {
			return err
		}
	}
	history = owned(history, owner)
	for i := range history {
		s := &history[i]
		v := version(*s)
		var to rcommon.Status
		switch {
		case v == rev && s.Labels["status"] != string(rcommon.StatusDeployed):
			to = rcommon.StatusDeployed
		case v < rev && s.Labels["status"] == string(rcommon.StatusDeployed):
			to = rcommon.StatusSuperseded
		default:
			continue
		}
		rel, err := decode(*s)
		if err != nil {
			return fmt.Errorf("release record %s: %w", s.Name, err)
		}
		rel.Info.Status = to
		if to == rcommon.StatusSuperseded {
			rel.Info.Description = "Superseded"
		}
		body, err := encodeBody(rel)
		if err != nil {
			return err
		}
		s.Data = map[string][]byte{"release": body}
		s.Labels["status"] = string(to)
		s.Labels["modifiedAt"] = strconv.FormatInt(time.Now().Unix(), 10)
		if err := c.Update(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// Uninstall deletes a release's records that owner owns (the
// Application's labels, see owns), as `helm uninstall` does once its
// objects are gone. Records of the name anyone else wrote stay.
func Uninstall(ctx context.Context, c client.Client, name, namespace string, owner map[string]string) error {
	history, err := History(ctx, c, name, namespace)
	if err != nil {
		return err
	}
	own := owned(history, owner)
	for i := range own {
		if err := c.Delete(ctx, &own[i]); err != nil && !apierrors.IsNotFound(err) {
			return err
		}
	}
	return nil
}

func encode(rel *releasev1.Release) (*corev1.Secret, error) {
	body, err := encodeBody(rel)
	if err != nil {
		return nil, err
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Name: secretName(rel.Name, rel.Version), Namespace: rel.Namespace,
			Labels: map[string]string{"owner": "helm", "name": rel.Name, "status": string(rel.Info.Status), "version": strconv.Itoa(rel.Version)},
		},
		Type: releaseType,
		Data: map[string][]byte{"release": body},
	}, nil
}

func encodeBody(rel *releasev1.Release) ([]byte, error) {
	b, err := json.Marshal(rel)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return []byte(base64.StdEncoding.EncodeToString(buf.Bytes())), nil
}

// maxRecordBytes bounds a decoded release record.
const maxRecordBytes = 8 << 20

func decode(s corev1.Secret) (*releasev1.Release, error) {
	raw, err := base64.StdEncoding.DecodeString(string(s.Data["release"]))
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	b, err := io.ReadAll(io.LimitReader(zr, maxRecordBytes))
	if err != nil {
		return nil, err
	}
	var rel releasev1.Release
	if err := json.Unmarshal(b, &rel); err != nil {
		return nil, err
	}
	if rel.Info == nil {
		rel.Info = &releasev1.Info{}
	}
	return &rel, nil
}
