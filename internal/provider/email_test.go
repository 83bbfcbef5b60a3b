package provider

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"strings"
	"testing"
)

// smtpSink accepts one message on 127.0.0.1, speaking just enough SMTP.
type smtpSink struct {
	ln       net.Listener
	auth     bool        // offer AUTH PLAIN
	starttls *tls.Config // offer STARTTLS with this config
	done     chan struct{}

	authLine string
	from     string
	rcpts    []string
	data     string
	commands []string
}

func newSMTPSink(t *testing.T, auth bool, starttls *tls.Config) *smtpSink {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &smtpSink{ln: ln, auth: auth, starttls: starttls, done: make(chan struct{})}
	t.Cleanup(func() { _ = ln.Close() })
	go s.serve()
	return s
}

func (s *smtpSink) port() int { return s.ln.Addr().(*net.TCPAddr).Port }

func (s *smtpSink) serve() {
	defer close(s.done)
	conn, err := s.ln.Accept()
	if err != nil {
		return
	}
	defer func() { _ = conn.Close() }()
	r := bufio.NewReader(conn)
	say := func(l string) { _, _ = io.WriteString(conn, l+"\r\n") }
	say("220 sink ready")
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		s.commands = append(s.commands, line)
		cmd := strings.ToUpper(line)
		switch {
		case strings.HasPrefix(cmd, "EHLO"):
			exts := []string{"sink"}
			if s.starttls != nil {
				exts = append(exts, "STARTTLS")
			}
			if s.auth {
				exts = append(exts, "AUTH PLAIN")
			}
			for i, e := range exts {
				if i == len(exts)-1 {
					say("250 " + e)
				} else {
					say("250-" + e)
				}
			}
		case cmd == "STARTTLS":
			say("220 go ahead")
			tc := tls.Server(conn, s.starttls)
			_ = tc.Handshake()
			return
		case strings.HasPrefix(cmd, "AUTH"):
			s.authLine = line
			say("235 ok")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			s.from = line[len("MAIL FROM:"):]
			say("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			s.rcpts = append(s.rcpts, line[len("RCPT TO:"):])
			say("250 ok")
		case cmd == "DATA":
			say("354 go on")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				b.WriteString(l)
			}
			s.data = b.String()
			say("250 queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default:
			say("502 unknown")
		}
	}
}

func sendTestEmail(t *testing.T, port int, password string) error {
	t.Helper()
	_, err := Email(loopbackAllowed(t)).Do(context.Background(), testEnv(t), Call{Provider: "email", Do: "send", Params: mustJSON(t, map[string]any{
		"from":    map[string]any{"address": "bot@example.com", "alias": "Vela Bot", "password": password, "host": "127.0.0.1", "port": port},
		"to":      []string{"a@example.com", "b@example.com"},
		"content": map[string]any{"subject": "Deployed ✓", "body": "<b>app</b> is running"},
	})})
	return err
}

func TestEmailSend_DeliversWithPlainAuth(t *testing.T) {
	s := newSMTPSink(t, true, nil)
	if err := sendTestEmail(t, s.port(), "pw"); err != nil {
		t.Fatal(err)
	}
	<-s.done
	want := "AUTH PLAIN " + base64.StdEncoding.EncodeToString([]byte("\x00bot@example.com\x00pw"))
	if s.authLine != want {
		t.Fatalf("auth %q, want %q", s.authLine, want)
	}
	if s.from != "<bot@example.com>" || strings.Join(s.rcpts, ",") != "<a@example.com>,<b@example.com>" {
		t.Fatalf("from %q rcpts %v", s.from, s.rcpts)
	}
	m, err := mail.ReadMessage(strings.NewReader(s.data))
	if err != nil {
		t.Fatal(err)
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
	if subject != "Deployed ✓" || m.Header.Get("From") != `"Vela Bot" <bot@example.com>` ||
		!strings.HasPrefix(m.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("headers %v", m.Header)
	}
	body, _ := io.ReadAll(quotedprintable.NewReader(m.Body))
	if strings.TrimSpace(string(body)) != "<b>app</b> is running" {
		t.Fatalf("body %q", body)
	}
}

func TestEmailSend_NoAuthWithoutPassword(t *testing.T) {
	s := newSMTPSink(t, true, nil)
	if err := sendTestEmail(t, s.port(), ""); err != nil {
		t.Fatal(err)
	}
	<-s.done
	if s.authLine != "" || s.data == "" {
		t.Fatalf("auth %q (want none), data %q", s.authLine, s.data)
	}
}

func TestEmailSend_StartTLSWhenOffered(t *testing.T) {
	crt, key := selfSignedPEM(t)
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		t.Fatal(err)
	}
	s := newSMTPSink(t, true, &tls.Config{Certificates: []tls.Certificate{pair}})
	err = sendTestEmail(t, s.port(), "pw")
	<-s.done
	// The sink's certificate is not trusted: the send fails at STARTTLS
	// and nothing (no password, no message) goes in plain text.
	if err == nil || !strings.Contains(err.Error(), "STARTTLS") {
		t.Fatalf("want a STARTTLS failure, got %v", err)
	}
	if s.authLine != "" || s.data != "" {
		t.Fatalf("sent in plain text after STARTTLS was offered: %v", s.commands)
	}
}

func TestEmailSend_RefusesBadInput(t *testing.T) {
	for name, p := range map[string]map[string]any{
		"line breaks": {"from": map[string]any{"address": "bot@example.com", "host": "127.0.0.1", "port": 25}, "to": []string{"a@example.com"},
			"content": map[string]any{"subject": "hi\r\nBcc: evil@example.com", "body": "x"}},
		"no receivers": {"from": map[string]any{"address": "bot@example.com", "host": "127.0.0.1", "port": 25}, "to": []string{},
			"content": map[string]any{"subject": "hi", "body": "x"}},
		"invalid server": {"from": map[string]any{"address": "bot@example.com", "host": "127.0.0.1", "port": 0}, "to": []string{"a@example.com"},
			"content": map[string]any{"subject": "hi", "body": "x"}},
	} {
		_, err := Email(loopbackAllowed(t)).Do(context.Background(), testEnv(t), Call{Provider: "email", Do: "send", Params: mustJSON(t, p)})
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("want an error about %s, got %v", name, err)
		}
	}
}
