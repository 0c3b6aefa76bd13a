package supervisor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/oauth2"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// bearerToken is the smallest auth.OAuthHandler: a bearer token the host
// already has (from its sign-in, a secret store, a refresh grant). The
// supervisor sends it on every request; on a 401 it calls Authorize, which
// renews the token, and sends the request once more. An Authorize that
// fails leaves the request unauthorized: a call fails, the session lives.
type bearerToken struct {
	mu      sync.Mutex
	token   string
	refresh func(ctx context.Context) (string, error) // nil: a static token
}

var _ auth.OAuthHandler = (*bearerToken)(nil)

func (b *bearerToken) TokenSource(context.Context) (oauth2.TokenSource, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: b.token}), nil
}

func (b *bearerToken) Authorize(ctx context.Context, _ *http.Request, resp *http.Response) error {
	_ = resp.Body.Close()
	if b.refresh == nil {
		return fmt.Errorf("static token refused: HTTP %d", resp.StatusCode)
	}
	tok, err := b.refresh(ctx)
	if err != nil {
		return err
	}
	b.mu.Lock()
	b.token = tok
	b.mu.Unlock()
	return nil
}

// A host gives the supervisor an OAuth handler. Here the gateway accepts
// only the token "fresh"; the host starts with an expired one, and its
// handler renews it on the first 401: the handshake goes through once
// authorized, and so does every later request.
func ExampleConfig_oAuthHandler() {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	refused := srv.Gateway().Add(mcptest.Rule{
		Match:  mcptest.Match{Header: mcptest.HeaderMatch{Name: "Authorization", Value: "Bearer fresh", Not: true}},
		Action: mcptest.Respond(http.StatusUnauthorized, http.Header{"Www-Authenticate": {`Bearer error="invalid_token"`}}, nil),
	})

	creds := &bearerToken{token: "expired", refresh: func(context.Context) (string, error) { return "fresh", nil }}
	sup, err := supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient(), OAuthHandler: creds}})
	if err != nil {
		panic(err)
	}
	defer sup.Close()
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := sup.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	_, err = sup.CallTool(ctx, &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: "1"}})
	fmt.Println("call ok:", err == nil)
	fmt.Println("refused once:", srv.Gateway().Fired(refused) >= 1)
	fmt.Println("sessions opened:", sup.SessionsOpened())
	// Output:
	// call ok: true
	// refused once: true
	// sessions opened: 1
}

// The resume walkthrough: detach, save the state, restart from it. The
// second supervisor re-attaches the same server-side session: no
// initialize reaches the server, and what the server declared is known at
// once (InitializeResult).
func ExampleSupervisor_ResumeState() {
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// 1. Run to ready, then stop without ending the server's session.
	first, err := supervisor.New(supervisor.Config{Endpoint: srv.URL(), HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}})
	if err != nil {
		panic(err)
	}
	first.Start()
	if err := first.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	_ = first.Detach()

	// 2. Save the state (a file, a keychain: it holds the session id).
	saved, err := json.Marshal(first.ResumeState())
	if err != nil {
		panic(err)
	}

	// 3. After the restart: load it and resume.
	var rs supervisor.ResumeState
	if err := json.Unmarshal(saved, &rs); err != nil {
		panic(err)
	}
	srv.Log().Reset()
	second, err := supervisor.New(supervisor.Config{Endpoint: srv.URL(), Resume: &rs, HTTP: supervisor.HTTPConfig{HTTPClient: srv.HTTPClient()}})
	if err != nil {
		panic(err) // a malformed state: *supervisor.ResumeStateError names the field
	}
	defer second.Close()
	fmt.Println("server known before Start:", second.InitializeResult() != nil)
	second.Start()
	if err := second.WaitForState(ctx, supervisor.Ready); err != nil {
		panic(err)
	}
	fmt.Println("same session:", second.ResumeState().SessionID == rs.SessionID)
	fmt.Println("initialize requests:", srv.Log().Count("initialize"))
	fmt.Println("tools:", second.Catalog().ToolNames())
	// Output:
	// server known before Start: true
	// same session: true
	// initialize requests: 0
	// tools: [block record tool-1]
}
