package supervisor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/stdio"
)

// A call without a name (ping) is named by its method alone, as its
// call-failed event is: no empty quotes.
func TestCallErrorTextOmitsAnEmptyName(t *testing.T) {
	sup, err := New(Config{Endpoint: "http://127.0.0.1:1/mcp"})
	require.NoError(t, err)
	defer sup.Close()
	err = sup.Ping(context.Background())
	require.ErrorIs(t, err, ErrNotReady)
	require.Equal(t, "mcpsup: ping: unknown [not-sent]: mcpsup: not ready (state idle: Start was not called)", err.Error())

	named := &CallError{Op: "tools/call", Name: "search", Verdict: classify.Verdict{Class: classify.Forbidden, HTTPStatus: 403}, Delivery: Answered}
	require.Equal(t, `mcpsup: tools/call "search": forbidden (HTTP 403)`, named.Error())
}

// A program that cannot start fails with a verdict of class unknown: the
// wait's error says why, not only "last failure unknown".
func TestStateErrorTextNamesAnUnknownFailure(t *testing.T) {
	if err := (stdio.Command{Path: "x"}).Validate(); err != nil {
		t.Skip(err)
	}
	err := failOnce(t, Config{Command: &stdio.Command{Path: "/nonexistent/mcp-server"}})
	require.Contains(t, err.Error(), "reason budget-spent, last failure unknown: ")
	require.Contains(t, err.Error(), "/nonexistent/mcp-server", err.Error())

	// A verdict whose class names its cause is not followed by its text.
	se := &StateError{State: Failed, Verdict: classify.Verdict{Class: classify.Forbidden, HTTPStatus: 403, Method: "initialize", Detail: "HTTP 403"}, Err: ErrNotReady}
	require.Equal(t, "mcpsup: not ready (state failed, last failure forbidden (HTTP 403, initialize))", se.Error())
}

// A server that cannot be reached fails with transport: the wait's and the
// call's errors say why (connection refused), not only "transport".
func TestErrorTextsNameATransportFailure(t *testing.T) {
	err := failOnce(t, Config{Endpoint: "http://127.0.0.1:1/mcp"})
	require.Contains(t, err.Error(), "last failure transport (")
	require.Contains(t, err.Error(), "connection refused")

	ce := &CallError{Op: "tools/call", Name: "search", Verdict: classify.Verdict{Class: classify.Transport, Method: "tools/call"},
		Delivery: OutcomeUnknown, Err: errors.New("read tcp 127.0.0.1:5->127.0.0.1:6: connection reset by peer")}
	require.Equal(t, `mcpsup: tools/call "search": transport (tools/call) [outcome-unknown]: read tcp 127.0.0.1:5->127.0.0.1:6: connection reset by peer`, ce.Error())
}

// failOnce starts a supervisor on cfg with one connection attempt and
// returns its wait for ready's error, which wraps ErrNotReady.
func failOnce(t *testing.T, cfg Config) error {
	t.Helper()
	cfg.Recovery.Backoff = Backoff{MaxAttempts: 1, InitialInterval: time.Millisecond}
	sup, err := New(cfg)
	require.NoError(t, err)
	defer sup.Close()
	sup.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = sup.WaitForState(ctx, Ready)
	require.ErrorIs(t, err, ErrNotReady)
	return err
}
