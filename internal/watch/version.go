package watch

import (
	"hash/fnv"
	"strconv"
)

// version is a resourceVersion in eight bytes and no allocation, where a
// string costs sixteen and one more small allocation per object, twice
// (the store's and the one Steward recorded). The API server's
// resourceVersions are etcd revisions, positive decimal numbers: those are
// held exactly. Any other (resourceVersions are opaque by contract) is
// held as its 64-bit FNV hash with the top bit set, so that it never
// equals a number: versions are only compared for equality, and a hash
// collision between two versions of one object is not a concern.
type version uint64

const (
	// none is no resourceVersion (unknown, or read again next pass).
	none version = 0
	// deleted is the version of an object's delete event.
	deleted version = ^version(0)
	hashed  version = 1 << 63
)

func versionOf(rv string) version {
	if rv == "" {
		return none
	}
	// ParseUint takes no sign; without a leading zero the decimal is the
	// number's only spelling (and "0" is none).
	if rv[0] != '0' {
		if n, err := strconv.ParseUint(rv, 10, 63); err == nil {
			return version(n)
		}
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(rv))
	v := version(h.Sum64()) | hashed
	if v == deleted {
		v--
	}
	return v
}

// String returns the resourceVersion of a number, and a stand-in that no
// API server gives for a hashed one: it is only used to fingerprint.
func (v version) String() string {
	switch {
	case v == none:
		return ""
	case v&hashed != 0:
		return "#" + strconv.FormatUint(uint64(v), 16)
	}
	return strconv.FormatUint(uint64(v), 10)
}

// ResourceVersionKey is what Unchanged returns for an object at
// resourceVersion rv: rv itself when decimal. Compare a resourceVersion
// read from the API server with one Unchanged returned through it.
func ResourceVersionKey(rv string) string {
	if v := versionOf(rv); v&hashed != 0 {
		return v.String()
	}
	return rv
}
