package provider

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"strconv"
	"strings"
	"time"

	"github.com/steward-oam/steward/internal/egress"
)

// emailTimeout bounds one email.send: dialling, the SMTP exchange and
// the message.
const emailTimeout = 30 * time.Second

// emailParams are email.#SendEmail's $params.
type emailParams struct {
	From struct {
		Address  string `json:"address"`
		Alias    string `json:"alias"`
		Password string `json:"password"`
		Host     string `json:"host"`
		Port     int    `json:"port"`
	} `json:"from"`
	To      []string `json:"to"`
	Content struct {
		Subject string `json:"subject"`
		Body    string `json:"body"`
	} `json:"content"`
}

// Email returns the `vela/email` actions: "email.send". Its connections
// dial through policy (nil: egress's default policy).
func Email(policy *egress.Policy) Registry {
	return Registry{"email.send": func(ctx context.Context, env *Env, raw json.RawMessage) (json.RawMessage, error) {
		return sendEmail(ctx, policy, raw)
	}}
}

// sendEmail sends an HTML email as KubeVela does (gomail): implicit TLS
// on port 465, otherwise STARTTLS when the server offers it; it logs in
// as the sender's address with PLAIN when a password is given. Unlike
// KubeVela, which sends in the background and checks on the next
// reconcile, the action waits for the server's answer (at most 30s).
// The server is dialled through the egress policy, and what it answered
// is quoted in the step's message only in part (peerTextMax), so that a
// step cannot read another service's banner through it.
func sendEmail(ctx context.Context, policy *egress.Policy, raw json.RawMessage) (json.RawMessage, error) {
	var p emailParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("email.send: invalid $params: %w", err)
	}
	msg, from, to, err := buildEmail(&p)
	if err != nil {
		return nil, fmt.Errorf("email.send: %w", err)
	}
	if p.From.Host == "" || p.From.Port <= 0 || p.From.Port > 65535 {
		return nil, fmt.Errorf("email.send: invalid server %s:%d", p.From.Host, p.From.Port)
	}
	if err := smtpSend(ctx, policy, p.From.Host, p.From.Port, from, p.From.Password, to, msg); err != nil {
		if egress.IsDenied(err) {
			return nil, Refused(fmt.Errorf("email.send: via %s:%d: %w", p.From.Host, p.From.Port, err))
		}
		return nil, fmt.Errorf("email.send: via %s:%d: %s", p.From.Host, p.From.Port, clipPeerText(err.Error()))
	}
	return nil, nil
}

// peerTextMax is how much of an error, which may quote what the server
// said, a step's message carries.
const peerTextMax = 120

// clipPeerText keeps the first peerTextMax printable characters of s.
func clipPeerText(s string) string {
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= peerTextMax {
			b.WriteString("...")
			break
		}
		if r < 0x20 || r == 0x7f {
			r = ' '
		}
		b.WriteRune(r)
	}
	return b.String()
}

func buildEmail(p *emailParams) (msg []byte, from string, to []string, err error) {
	for _, s := range []string{p.From.Alias, p.Content.Subject} {
		if strings.ContainsAny(s, "\r\n") {
			return nil, "", nil, errors.New("the sender alias and the subject may not hold line breaks")
		}
	}
	fromAddr, err := mail.ParseAddress(p.From.Address)
	if err != nil {
		return nil, "", nil, fmt.Errorf("sender address %q: %w", p.From.Address, err)
	}
	fromAddr.Name = p.From.Alias
	if len(p.To) == 0 {
		return nil, "", nil, errors.New("no receivers (to)")
	}
	var toHeader []string
	for _, t := range p.To {
		a, err := mail.ParseAddress(t)
		if err != nil {
			return nil, "", nil, fmt.Errorf("receiver address %q: %w", t, err)
		}
		to = append(to, a.Address)
		toHeader = append(toHeader, a.String())
	}
	var b bytes.Buffer
	hdr := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	hdr("From", fromAddr.String())
	hdr("To", strings.Join(toHeader, ", "))
	hdr("Subject", mime.QEncoding.Encode("utf-8", p.Content.Subject))
	hdr("Date", time.Now().Format(time.RFC1123Z))
	hdr("MIME-Version", "1.0")
	hdr("Content-Type", "text/html; charset=UTF-8")
	hdr("Content-Transfer-Encoding", "quoted-printable")
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	if _, err := qp.Write([]byte(p.Content.Body)); err != nil {
		return nil, "", nil, err
	}
	if err := qp.Close(); err != nil {
		return nil, "", nil, err
	}
	b.WriteString("\r\n")
	return b.Bytes(), fromAddr.Address, to, nil
}

func smtpSend(ctx context.Context, policy *egress.Policy, host string, port int, from, password string, to []string, msg []byte) error {
	ctx, cancel := context.WithTimeout(ctx, emailTimeout)
	defer cancel()
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	tlsCfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
	conn, err := policy.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	if port == 465 {
		tc := tls.Client(conn, tlsCfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return err
		}
		conn = tc
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { _ = conn.Close() })
	defer stop()
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		_ = conn.Close()
		return err
	}
	defer func() { _ = c.Close() }()
	if err := c.Hello("localhost"); err != nil {
		return err
	}
	if port != 465 {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsCfg); err != nil {
				return fmt.Errorf("STARTTLS: %w", err)
			}
		}
	}
	if password != "" {
		if ok, _ := c.Extension("AUTH"); !ok {
			return errors.New("a password is given but the server offers no authentication (AUTH)")
		}
		// net/smtp sends PLAIN credentials only over TLS or to localhost.
		if err := c.Auth(smtp.PlainAuth("", from, password, host)); err != nil {
			return fmt.Errorf("authentication: %w", err)
		}
	}
	if err := c.Mail(from); err != nil {
		return err
	}
	for _, t := range to {
		if err := c.Rcpt(t); err != nil {
			return fmt.Errorf("receiver %s: %w", t, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}
