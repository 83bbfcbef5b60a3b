package dashboard

import (
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// A "\r" in text from the cluster must not start an SSE field of its own:
// every line a client reads, splitting the way it does, is "event: update"
// or "data: ...".
func TestStreamSend_CarriageReturnCannotInjectField(t *testing.T) {
	rec := httptest.NewRecorder()
	st, ok := newStream(rec)
	if !ok {
		t.Fatal("recorder does not flush")
	}
	fragment := "a\rdata: <script>x</script>\r\nb\nc\revent: evil\rid: 7"
	if err := st.send([]byte(fragment)); err != nil {
		t.Fatal(err)
	}
	out := rec.Body.String()
	var data []string
	for _, line := range regexp.MustCompile(`\r\n|\r|\n`).Split(out, -1) {
		switch {
		case line == "":
		case line == "event: update":
		case strings.HasPrefix(line, "data: "):
			data = append(data, strings.TrimPrefix(line, "data: "))
		default:
			t.Errorf("stream line %q is neither \"event: update\" nor data", line)
		}
	}
	if strings.Contains(out, "\r") {
		t.Errorf("stream %q holds a bare \\r", out)
	}
	want := []string{"a", "data: <script>x</script>", "b", "c", "event: evil", "id: 7"}
	if strings.Join(data, "|") != strings.Join(want, "|") {
		t.Errorf("data lines %q; want %q", data, want)
	}
}

func TestSSELines(t *testing.T) {
	for in, want := range map[string][]string{
		"":           {""},
		"a":          {"a"},
		"a\nb":       {"a", "b"},
		"a\r\nb":     {"a", "b"},
		"a\rb":       {"a", "b"},
		"a\r\r\nb\n": {"a", "", "b", ""},
	} {
		got := sseLines(in)
		if strings.Join(got, "|") != strings.Join(want, "|") || len(got) != len(want) {
			t.Errorf("sseLines(%q) = %q; want %q", in, got, want)
		}
	}
}
