package status

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/equality"
)

// Same reports whether a and b (two statuses, or parts of one) would be
// stored alike: their JSON encodings are equal, as the API server keeps
// them. It is what a status write would change, and several times cheaper
// than equality.Semantic.DeepEqual on a settled pass, which walks every
// field by reflection. Nil and empty lists or maps (omitempty) and times
// in the same second (stored to the second) are the same; a value that
// does not encode falls back to the semantic comparison.
func Same(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	if errA != nil || errB != nil {
		return equality.Semantic.DeepEqual(a, b)
	}
	return bytes.Equal(ja, jb)
}

// Digest is a digest of v's JSON encoding, false when v does not encode:
// two values with the same digest are Same. It lets a caller keep what
// it compares against (memory.StoredStatus) instead of encoding it again.
func Digest(v any) ([32]byte, bool) {
	b, err := json.Marshal(v)
	if err != nil {
		return [32]byte{}, false
	}
	return sha256.Sum256(b), true
}
