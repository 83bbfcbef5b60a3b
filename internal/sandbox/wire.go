package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// A frame is a 4-byte big-endian length and that many bytes of JSON: one
// cueeval.Request from the controller to an evaluator, one
// cueeval.Response back. The length comes first so that a reader refuses
// an oversized frame before reading (and allocating) it.
const frameHeader = 4

// errFrameTooLarge is a frame longer than the reader accepts.
var errFrameTooLarge = errors.New("frame too large")

// errBadFrame is a frame read whole that is not what it should be: the
// stream is still in step, but the answer cannot be used.
var errBadFrame = errors.New("the evaluator's answer cannot be read")

// encodeFrame returns v as a frame.
func encodeFrame(v any) ([]byte, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(body) > 1<<31-1 {
		return nil, errFrameTooLarge
	}
	frame := make([]byte, frameHeader, frameHeader+len(body))
	binary.BigEndian.PutUint32(frame, uint32(len(body)))
	return append(frame, body...), nil
}

// readFrame reads one frame of at most max bytes into v. io.EOF means the
// writer closed the stream between frames.
func readFrame(r io.Reader, max int, v any) error {
	var head [frameHeader]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return err
	}
	n := int(binary.BigEndian.Uint32(head[:]))
	if n > max {
		return fmt.Errorf("%w: %d bytes, at most %d", errFrameTooLarge, n, max)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if err := json.Unmarshal(body, v); err != nil {
		return fmt.Errorf("%w: %w", errBadFrame, err)
	}
	return nil
}
