package httpsession

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"golang.org/x/oauth2"

	"github.com/mcpsup/mcpsup/classify"
)

// authorizer is the innermost round-tripper of a [Transport]: every request
// the Transport sends (POSTs, the standalone stream and its re-dials, the
// resumption of a call's stream, DELETE) goes through it. With an
// [auth.OAuthHandler] it sets the Authorization header from the handler's
// token source and, on a 401 or a 403 whose WWW-Authenticate carries
// error="insufficient_scope" (MCP authorization; RFC 6750 section 3.1),
// runs the handler's Authorize and sends the request once more, as go-sdk's
// own client does for POSTs (mcp/streamable.go). It also keeps the
// credential gate (see [authGate]) with or without a handler.
type authorizer struct {
	base    http.RoundTripper
	handler auth.OAuthHandler // nil: the host's client carries its credentials
	maxBody int               // bound of the refused answer's body kept for the caller
	gate    authGate
	log     *slog.Logger // nil: discarded

	tokMu   sync.Mutex
	tokCall *tokenCall // the Token under way, nil when none
	lastTok string     // the credential onCredential was last told of (told)
	// renewed counts the Authorize calls that succeeded: the generation of
	// the credential. A Token call started before the last one is not
	// joined, and a request refused with an older generation's credential
	// is sent again with the new one, without an Authorize of its own.
	renewed uint64
	// failed counts the Authorize calls that failed (not cut by their
	// request's end): a request sent before one, with the credential it
	// could not renew, takes that answer instead of running another.
	failed uint64
	flight *flight // the Authorize under way, nil when none

	onCredential func(token string) // Config.OnCredential; may be nil
}

// flight is one run of the handler's Authorize, which every request refused
// with the credential it renews joins.
type flight struct {
	done chan struct{} // closed once it ended: renewed, failed or cut
}

// tokenCall is one call of a token source's Token, which requests join.
type tokenCall struct {
	done    chan struct{} // closed once tok and err are set
	tok     *oauth2.Token
	err     error
	renewed uint64 // authorizer.renewed when it started
}

func newAuthorizer(base http.RoundTripper, h auth.OAuthHandler, maxBody int, log *slog.Logger) *authorizer {
	return &authorizer{base: base, handler: h, maxBody: maxBody, log: log}
}

// refusedCredential reports an answer that says the credential is missing,
// expired or short of scope: 401, or 403 with insufficient_scope.
func refusedCredential(resp *http.Response) bool {
	return resp.StatusCode == http.StatusUnauthorized ||
		(resp.StatusCode == http.StatusForbidden && classify.InsufficientScope(resp.Header.Get("WWW-Authenticate")))
}

// maxSends bounds the sends of one request: a refusal of a credential an
// Authorize renewed since sends it again with the new one, a refusal of the
// current one runs (or joins) an Authorize and sends it again, and a
// refusal after an Authorize is handed on.
const maxSends = 3

func (a *authorizer) RoundTrip(req *http.Request) (*http.Response, error) {
	authorized := false // an Authorize ran for this request's credential
	for sends := 1; ; sends++ {
		out, gen, err := a.authorized(req)
		if err != nil {
			return nil, err
		}
		a.tokMu.Lock()
		failed := a.failed
		a.tokMu.Unlock()
		sent := a.gate.now()
		resp, err := a.base.RoundTrip(out)
		a.noteSent(resp)
		if err != nil || !refusedCredential(resp) || a.handler == nil || !replayable(req) || authorized || sends == maxSends {
			a.note(resp, sent)
			return resp, err
		}
		refused, ran, err := a.authorize(req, resp, gen, failed)
		if errors.Is(err, errKeepAnswer) {
			return refused, nil
		}
		if err != nil {
			return nil, err
		}
		authorized = ran
	}
}

// noteSent tells onCredential ([authorizer.told]) of the Authorization
// credential of a request as the base sent it (resp.Request: the host's own
// RoundTripper may have set it on its copy, as HTTPClient's credentials
// are), without its scheme ("Bearer "): a server may quote it in an
// answer's text, which reaches errors and events. The handler's own token
// is the last one told already.
func (a *authorizer) noteSent(resp *http.Response) {
	if a.onCredential == nil || resp == nil || resp.Request == nil {
		return
	}
	v := resp.Request.Header.Get("Authorization")
	if v == "" {
		return
	}
	if _, cred, ok := strings.Cut(v, " "); ok {
		v = strings.TrimSpace(cred)
	}
	a.told(v)
}

// note tells the gate what an answer to a request sent at gate epoch sent
// said of the credential.
func (a *authorizer) note(resp *http.Response, sent uint64) {
	switch {
	case resp == nil:
	case refusedCredential(resp):
		a.gate.refused()
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		a.gate.granted(sent)
	}
}

// authorized returns a copy of req carrying the handler's current token,
// and the generation of that token ([authorizer.renewed] when its Token
// call started). A token source that fails
// fails the request with an error wrapping [classify.ErrCredential], except
// for an invalid_grant refusal (RFC 6749 section 5.2), which go-sdk too
// takes as "send without a token, let the server's 401 start Authorize".
func (a *authorizer) authorized(req *http.Request) (*http.Request, uint64, error) {
	if a.handler == nil {
		return req, 0, nil
	}
	a.tokMu.Lock()
	gen := a.renewed
	a.tokMu.Unlock()
	ts, err := guarded("TokenSource", func() (oauth2.TokenSource, error) { return a.handler.TokenSource(req.Context()) })
	if err != nil {
		return nil, 0, fmt.Errorf("mcpsup/httpsession: OAuth token source: %w: %w", classify.ErrCredential, err)
	}
	out := req.Clone(req.Context())
	if req.Body != nil && req.Body != http.NoBody && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			return nil, 0, err
		}
		out.Body = body
	}
	if ts == nil {
		return out, gen, nil
	}
	tok, gen, err := a.token(req.Context(), ts)
	var re *oauth2.RetrieveError
	switch {
	case errors.As(err, &re) && re.ErrorCode == "invalid_grant":
	case err != nil && req.Context().Err() != nil:
		return nil, 0, err // the request's end, not the credential's
	case err != nil:
		return nil, 0, fmt.Errorf("mcpsup/httpsession: OAuth token: %w: %w", classify.ErrCredential, err)
	case tok != nil && tok.AccessToken != "":
		a.told(tok.AccessToken)
		out.Header.Set("Authorization", "Bearer "+tok.AccessToken)
	}
	return out, gen, nil
}

// authorize runs the handler's flow for the refused answer resp to req,
// once per credential: req carried the token of generation gen, and was
// sent when the count of failed flows was failed. The requests refused
// with one token (concurrent calls when it expired) share one Authorize:
// one refused with a token an Authorize has renewed since is sent again
// without another, and one sent before a flow that failed takes that
// failure ("for public clients, authorization servers MUST rotate refresh
// tokens": MCP 2025-11-25, basic/authorization.mdx, Token Theft; a second
// refresh racing the first may spend a spent refresh token). When the
// flow fails, the refused answer is returned (its body kept, at most
// maxBody bytes) to every request that shares it, so the caller classifies
// it unauthorized with its facts, and the flow's error, which the answer
// cannot carry, is logged at Warn once; a flow cut by the leading
// request's context returns that context's error to it, and another
// request waiting leads a flow of its own. ran reports that a flow ran
// (led or joined) for req's token.
func (a *authorizer) authorize(req *http.Request, resp *http.Response, gen, failed uint64) (refused *http.Response, ran bool, err error) {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(a.maxBody)))
	_ = resp.Body.Close()
	kept := func() *http.Response {
		r := *resp
		r.Header = resp.Header.Clone()
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		return &r
	}
	ctx := req.Context()
	var f *flight // the flight joined
	for {
		var lead bool
		a.tokMu.Lock()
		if a.renewed != gen {
			a.tokMu.Unlock()
			return nil, f != nil, nil // renewed since: sent again with the new credential
		}
		if a.failed != failed {
			a.tokMu.Unlock()
			return kept(), true, errKeepAnswer // an Authorize failed for it since it was sent
		}
		f, lead = a.flight, a.flight == nil
		if lead {
			f = &flight{done: make(chan struct{})}
			a.flight = f
		}
		a.tokMu.Unlock()
		if lead {
			refused, err := a.lead(ctx, f, req, resp, kept)
			return refused, true, err
		}
		select {
		case <-f.done: // renewed, failed or cut: the next round tells
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
}

// lead runs the Authorize of flight f for the refused answer resp to req.
func (a *authorizer) lead(ctx context.Context, f *flight, req *http.Request, resp *http.Response, kept func() *http.Response) (*http.Response, error) {
	_, err := guarded("Authorize", func() (struct{}, error) { return struct{}{}, a.handler.Authorize(ctx, req, kept()) })
	a.tokMu.Lock()
	a.flight = nil
	if err == nil {
		a.renewed++ // a Token under way may hand out the refused token
	}
	cut := err != nil && ctx.Err() != nil // the request's end, not the credential's
	if err != nil && !cut {
		a.failed++
	}
	a.tokMu.Unlock()
	close(f.done)
	switch {
	case err == nil:
		return nil, nil
	case cut:
		return nil, ctx.Err()
	}
	a.gate.refused()
	if a.log != nil {
		a.log.Warn("mcpsup/httpsession: the OAuth handler's Authorize failed; the refused answer is handed on",
			"verb", req.Method, "status", resp.StatusCode, "error", err.Error())
	}
	return kept(), errKeepAnswer
}

// token returns ts's token and its generation, or the error of ctx once it ends first.
// oauth2's Token takes no context: a token source that blocks (a keychain
// prompt, a token endpoint that never answers) held the request past its
// context's end, and the session's Close with it. Token runs on a goroutine
// of its own, which the requests meanwhile join instead of starting more,
// so a source that blocks for good holds one goroutine per successful
// Authorize, not one per request. A call that started before the last
// successful Authorize is not joined: it may hand out the token the server
// refused, and the request sent again after the Authorize would carry it.
func (a *authorizer) token(ctx context.Context, ts oauth2.TokenSource) (*oauth2.Token, uint64, error) {
	a.tokMu.Lock()
	c := a.tokCall
	if c == nil || c.renewed != a.renewed {
		c = &tokenCall{done: make(chan struct{}), renewed: a.renewed}
		a.tokCall = c
		go func() {
			c.tok, c.err = guarded("Token", ts.Token)
			a.tokMu.Lock()
			if a.tokCall == c {
				a.tokCall = nil
			}
			a.tokMu.Unlock()
			close(c.done)
		}()
	}
	a.tokMu.Unlock()
	select {
	case <-c.done:
		return c.tok, c.renewed, c.err
	case <-ctx.Done():
		return nil, 0, fmt.Errorf("mcpsup/httpsession: OAuth token source did not answer before the request's end: %w", ctx.Err())
	}
}

// told tells onCredential of tok unless it was the last credential told:
// the handler's token, or one a request carried as the base sent it.
func (a *authorizer) told(tok string) {
	if a.onCredential == nil {
		return
	}
	a.tokMu.Lock()
	fresh := tok != a.lastTok
	a.lastTok = tok
	a.tokMu.Unlock()
	if fresh {
		a.onCredential(tok)
	}
}

// guarded runs f, a call of the host's OAuth handler, named what, and
// turns a panic into its error. The handler runs on the Transport's own
// goroutines too (the stream keeper's re-dials, a call stream's
// resumption), where a panic ends the process, and on go-sdk's write path,
// where it left go-sdk's connection locked and its Close waiting forever: a
// panic fails the request it serves, as a failing handler does.
func guarded[T any](what string, f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("OAuth handler's %s panicked: %v", what, r)
		}
	}()
	return f()
}

// errKeepAnswer tells RoundTrip to hand on the refused answer: the flow
// could not authorize.
var errKeepAnswer = errors.New("keep the refused answer")

// replayable reports whether req can be sent a second time.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// authGate remembers whether the server last refused the credential, so the
// standalone stream keeper holds its re-dials until a request sent after
// the refusal is answered with a 2xx (by a fresh credential of the host's
// client, or after an Authorize) instead of re-dialing a server that
// refuses it. A 2xx to a request sent before the refusal says nothing of
// the credential now. Safe for concurrent use.
type authGate struct {
	mu    sync.Mutex
	epoch uint64        // refusals so far
	wait  chan struct{} // nil while the credential is accepted
}

// now returns the epoch a request is sent in.
func (g *authGate) now() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.epoch
}

func (g *authGate) refused() {
	g.mu.Lock()
	g.epoch++
	if g.wait == nil {
		g.wait = make(chan struct{})
	}
	g.mu.Unlock()
}

// granted opens the gate for a 2xx answer to a request sent in epoch sent,
// unless a refusal came after it was sent.
func (g *authGate) granted(sent uint64) {
	g.mu.Lock()
	if g.wait != nil && sent == g.epoch {
		close(g.wait)
		g.wait = nil
	}
	g.mu.Unlock()
}

// accepted returns a channel closed once the credential is accepted again;
// an already closed one when it is.
func (g *authGate) accepted() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.wait == nil {
		return closedChan
	}
	return g.wait
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
