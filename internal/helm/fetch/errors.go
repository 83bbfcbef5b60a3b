package fetch

import (
	"errors"
	"net/http"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/errcode"
)

// permanentError is a fetch that failed in a way trying again does not
// change: the source answered, and what it said will be the same on the
// next try.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// permanent marks err as a failure a retry does not change.
func permanent(err error) error {
	if err == nil || IsPermanent(err) {
		return err
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether a fetch failed in a way trying again does
// not change until someone changes the source or the Application: the
// source answered that it has no such chart or version (HTTP 404 or
// 410, no entry in the index, no matching tag, an unknown OCI
// repository or manifest), refused the credentials (401, 403), served
// something that is not a chart or is over its bound, or the source
// itself is malformed (no repoURL, a tag in an oci:// reference, a
// version that is neither a tag nor a range). An unreachable source, a
// timeout, a server error (5xx, 429) or an archive whose digest does not
// match the index (a repository being updated) is transient, and so is
// anything else.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

// permanentStatus reports whether an HTTP status answers for good: a
// client error other than a timeout or a rate limit.
func permanentStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests:
		return false
	}
	return code >= 400 && code < 500
}

// classifyOCI marks an OCI registry's answer permanent when it is one:
// an unknown repository, tag or manifest, or a client error status.
func classifyOCI(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, errdef.ErrNotFound) {
		return permanent(err)
	}
	var resp *errcode.ErrorResponse
	if errors.As(err, &resp) && permanentStatus(resp.StatusCode) {
		return permanent(err)
	}
	return err
}
