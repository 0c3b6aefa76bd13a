// Package oauthcarrier carries an MCP client's OAuth credential on every
// request of a streamable HTTP session (MCP 2025-11-25 authorization.mdx;
// decision record 0021): the Bearer token, one Authorize per refused
// credential, and the gate that holds a push stream while the credential
// is refused. It knows nothing of a session or of MCP messages.
package oauthcarrier

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"

	"github.com/mcpsup/mcpsup/classify"
)

// Transport is an http.RoundTripper over Base. With a Handler it sets the
// Bearer token and, on an answer [Refused] says refuses the credential,
// runs Authorize and sends the request once more, as go-sdk does; it sends
// one request at most 3 times. Token and Authorize are single-flighted per
// credential generation (x/sync singleflight), each bounded by its
// request's context (oauth2's Token takes none). A failing token source
// fails the request with [classify.ErrCredential], but invalid_grant (RFC
// 6749 section 5.2), which is sent without a token for the server's 401 to
// start Authorize. A panic of the Handler is the request's error. It keeps
// the credential gate ([Transport.Accepted]) with or without a Handler.
// Set the fields before the first request; safe for concurrent use after.
type Transport struct {
	Base    http.RoundTripper // nil: http.DefaultTransport
	Handler auth.OAuthHandler // nil: Base carries the host's credentials
	// MaxBody bounds, in bytes, the body of a refused answer kept for
	// Authorize and for the caller when Authorize fails (0: none kept).
	MaxBody      int
	Logger       *slog.Logger       // Authorize's failures; nil: discarded
	OnCredential func(token string) // told once of each credential sent, its scheme cut; may be nil

	// The calls of Token and Authorize under way, keyed by the credential's
	// generation (renewed): requests join the one of their generation.
	tokens, flights singleflight.Group
	renewed         atomic.Uint64 // Authorize calls that succeeded: the credential's generation
	failed          atomic.Uint64 // Authorize calls that failed, not cut by their request's end

	epoch atomic.Uint64 // refusals of the credential so far, written under mu

	mu      sync.Mutex
	lastTok string        // the credential OnCredential was last told of
	wait    chan struct{} // Accepted's; nil while the credential is accepted
}

// Refused reports whether resp refuses the credential: 401, or 403 with
// error="insufficient_scope" (RFC 6750 section 3.1).
func Refused(resp *http.Response) bool {
	return resp.StatusCode == http.StatusUnauthorized ||
		(resp.StatusCode == http.StatusForbidden && classify.InsufficientScope(strings.Join(resp.Header.Values("WWW-Authenticate"), ", ")))
}

// maxSends bounds the sends of one request: again with a credential renewed
// since it was refused, again after an Authorize, then the refusal stands.
const maxSends = 3

// RoundTrip sends req through Base with the Handler's credential.
func (a *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	authorized := false // an Authorize ran for this request's credential
	for sends := 1; ; sends++ {
		out, gen, err := a.authorized(req)
		if err != nil {
			return nil, err
		}
		failed := a.failed.Load()
		sent := a.epoch.Load()
		resp, err := cmp.Or[http.RoundTripper](a.Base, http.DefaultTransport).RoundTrip(out)
		a.noteSent(resp)
		if err != nil || !Refused(resp) || a.Handler == nil || !replayable(req) || authorized || sends == maxSends {
			a.note(resp, sent)
			return resp, err
		}
		refused, ran, err := a.authorize(req, resp, gen, failed)
		if refused != nil || err != nil {
			return refused, err
		}
		authorized = ran
	}
}

// noteSent tells OnCredential of the Authorization credential a request
// carried as the base sent it (the host's RoundTripper may set one), its
// scheme cut: a server may quote it in an answer's text.
func (a *Transport) noteSent(resp *http.Response) {
	if a.OnCredential == nil || resp == nil || resp.Request == nil {
		return
	}
	v := resp.Request.Header.Get("Authorization")
	if _, cred, ok := strings.Cut(v, " "); ok {
		v = strings.TrimSpace(cred)
	}
	if v != "" {
		a.told(v)
	}
}

// note takes what an answer to a request sent at epoch sent says of the
// credential ([Transport.Accepted]).
func (a *Transport) note(resp *http.Response, sent uint64) {
	switch {
	case resp == nil:
	case Refused(resp):
		a.refused()
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		a.mu.Lock()
		if a.wait != nil && sent == a.epoch.Load() {
			close(a.wait)
			a.wait = nil
		}
		a.mu.Unlock()
	}
}

// refused starts a new epoch, the credential refused until a request sent
// in it gets a 2xx.
func (a *Transport) refused() {
	a.mu.Lock()
	a.epoch.Add(1)
	if a.wait == nil {
		a.wait = make(chan struct{})
	}
	a.mu.Unlock()
}

// authorized returns a copy of req carrying the Handler's token, and its
// generation.
func (a *Transport) authorized(req *http.Request) (*http.Request, uint64, error) {
	if a.Handler == nil {
		return req, 0, nil
	}
	ctx := req.Context()
	ts, err := guarded("TokenSource", func() (oauth2.TokenSource, error) { return a.Handler.TokenSource(ctx) })
	if err != nil {
		return nil, 0, fmt.Errorf("mcpsup/httpsession: OAuth token source: %w: %w", classify.ErrCredential, err)
	}
	out := req.Clone(ctx)
	if req.Body != nil && req.Body != http.NoBody && req.GetBody != nil {
		if out.Body, err = req.GetBody(); err != nil {
			return nil, 0, err
		}
	}
	gen := a.renewed.Load()
	if ts == nil {
		return out, gen, nil
	}
	// oauth2's Token takes no context: it runs on a goroutine of its own,
	// which the requests of its generation join, bounded by each one's
	// context. A call started before the last Authorize is not joined: it
	// may hand out the token the server refused.
	var tok *oauth2.Token
	select {
	case r := <-a.tokens.DoChan(strconv.FormatUint(gen, 10), func() (any, error) { return guarded("Token", ts.Token) }):
		tok, err = r.Val.(*oauth2.Token), r.Err
	case <-ctx.Done():
		return nil, 0, fmt.Errorf("mcpsup/httpsession: OAuth token source did not answer before the request's end: %w", ctx.Err())
	}
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
	case err != nil && ctx.Err() != nil:
		return nil, 0, err // the request's end, not the credential's
	case err != nil:
		return nil, 0, fmt.Errorf("mcpsup/httpsession: OAuth token: %w: %w", classify.ErrCredential, err)
	case tok != nil && tok.AccessToken != "":
		a.told(tok.AccessToken)
		out.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return out, gen, nil
}

// authorize runs, or joins, the one Authorize of the credential of
// generation gen, since public clients' refresh tokens rotate (MCP
// 2025-11-25 authorization.mdx, Token Theft). A request refused with a token
// renewed since is sent again; one sent before a failed Authorize (failed:
// the failures counted when it was sent) gets the refused answer (body kept,
// at most maxBody bytes). ran: an Authorize ran for req's token.
func (a *Transport) authorize(req *http.Request, resp *http.Response, gen, failed uint64) (refused *http.Response, ran bool, err error) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(a.MaxBody)))
	_ = resp.Body.Close()
	kept := func() *http.Response {
		r := *resp
		r.Header = resp.Header.Clone()
		r.Body, r.ContentLength = io.NopCloser(bytes.NewReader(body)), int64(len(body))
		return &r
	}
	ctx := req.Context()
	for {
		switch {
		case a.renewed.Load() != gen:
			return nil, ran, nil // renewed since: sent again with the new credential
		case a.failed.Load() != failed:
			return kept(), true, nil
		}
		led := false
		flight := a.flights.DoChan(strconv.FormatUint(gen, 10), func() (any, error) {
			led = true
			if a.renewed.Load() != gen || a.failed.Load() != failed {
				return nil, nil // the flight before ended between the check above and this one
			}
			return nil, a.runAuthorize(ctx, req, kept())
		})
		select {
		case r := <-flight:
			ran = true
			if led && r.Err != nil && ctx.Err() != nil {
				return nil, true, ctx.Err()
			}
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// runAuthorize runs the handler's Authorize and counts its outcome.
func (a *Transport) runAuthorize(ctx context.Context, req *http.Request, refused *http.Response) error {
	_, err := guarded("Authorize", func() (struct{}, error) { return struct{}{}, a.Handler.Authorize(ctx, req, refused) })
	cut := err != nil && ctx.Err() != nil // the request's end, not the credential's
	if err == nil {
		a.renewed.Add(1)
	}
	if err != nil && !cut {
		a.failed.Add(1)
		a.refused()
		if a.Logger != nil {
			a.Logger.Warn("mcpsup/httpsession: the OAuth handler's Authorize failed; the refused answer is handed on",
				"verb", req.Method, "status", refused.StatusCode, "error", err.Error())
		}
	}
	return err
}

// told tells OnCredential of tok unless it was the last credential told.
func (a *Transport) told(tok string) {
	if a.OnCredential == nil {
		return
	}
	a.mu.Lock()
	fresh := tok != a.lastTok
	a.lastTok = tok
	a.mu.Unlock()
	if fresh {
		a.OnCredential(tok)
	}
}

// guarded runs f, a call of the host's OAuth handler named what, turning a
// panic into its error: the handler runs on the conn's goroutines too,
// where a panic ends the process.
func guarded[T any](what string, f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("OAuth handler's %s panicked: %v", what, r)
		}
	}()
	return f()
}

// replayable reports whether req can be sent a second time.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// Accepted returns a channel closed once the credential is accepted: at
// once until an answer refuses it, then when a request sent after the last
// refusal (or failed Authorize) gets a 2xx; a 2xx to one sent before says
// nothing of the credential now. A push stream waits on it to re-dial.
func (a *Transport) Accepted() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.wait != nil {
		return a.wait
	}
	c := make(chan struct{})
	close(c)
	return c
}
