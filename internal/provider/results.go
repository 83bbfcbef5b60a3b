package provider

import (
	"context"
	"encoding/json"
	"unicode/utf8"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// resultBudget counts what an action is about to return, as JSON, and
// refuses past its limit, so that an action stops reading a large list or
// response as soon as it is over, rather than after holding it all.
type resultBudget struct {
	what  string
	limit int64
	used  int64
}

// add counts v, as encoded JSON.
func (b *resultBudget) add(v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return b.addBytes(int64(len(raw)))
}

// addBytes counts n bytes.
func (b *resultBudget) addBytes(n int64) error {
	b.used += n
	if b.used > b.limit {
		return &TooLargeError{What: b.what, Limit: b.limit, Flag: FlagMaxActionResult}
	}
	return nil
}

// listPageStart and listPageMax bound one page of a list an action reads:
// the first page is small, and pages grow while they stay small, so a
// namespace of large objects is never read in one piece.
const (
	listPageStart = 16
	listPageMax   = 512
)

// listPages lists page by page, handing each page to each; it stops at
// the first error each returns. Pages start small and grow while the
// list goes on, so a namespace of large objects is never read whole.
func listPages(ctx context.Context, c client.Reader, newList func() client.ObjectList, each func(client.ObjectList) error, opts ...client.ListOption) error {
	limit := int64(listPageStart)
	cont := ""
	for {
		list := newList()
		o := append(append([]client.ListOption(nil), opts...), client.Limit(limit))
		if cont != "" {
			o = append(o, client.Continue(cont))
		}
		if err := c.List(ctx, list, o...); err != nil {
			return err
		}
		if err := each(list); err != nil {
			return err
		}
		cont = list.GetContinue()
		if cont == "" {
			return nil
		}
		if limit < listPageMax {
			limit *= 2
		}
	}
}

// jsonStringLen is the length of s encoded as a JSON string by
// encoding/json (quotes included): what a body read into a string costs
// in a step's result, known before it is encoded.
func jsonStringLen(s []byte) int64 {
	n := int64(2)
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t' || c == '\b' || c == '\f':
				n += 2
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 6 // \ufffd
		case r == '\u2028' || r == '\u2029':
			n += 6
		default:
			n += int64(size)
		}
		i += size
	}
	return n
}
