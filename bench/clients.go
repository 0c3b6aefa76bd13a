package bench

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// Client names a client under measurement.
type Client string

// The clients compared.
const (
	// Supervised is an mcpsup Supervisor.
	Supervised Client = "mcpsup"
	// ReconnectOnError is a go-sdk client that treats every error of
	// tools/call as a dead transport: it closes the session (DELETE),
	// connects again (initialize, notifications/initialized) and lists the
	// tools. This is the behaviour of failure story S4.
	ReconnectOnError Client = "reconnect-on-error"
	// BareSDK is one go-sdk ClientSession used as is.
	BareSDK Client = "bare go-sdk"
	// BareListed is a go-sdk ClientSession that listed the tools once
	// connected and keeps the result, as a host must before its first
	// call: the like-for-like baseline of mcpsup's setup and catalog.
	BareListed Client = "bare go-sdk + ListTools"
)

// Clients lists the clients in report order.
var Clients = []Client{Supervised, ReconnectOnError, BareSDK}

// pinnedVersion is given to the go-sdk baselines so their connect skips the
// server/discover attempt against a 2025-era server: the baselines get the
// cheapest handshake go-sdk has.
const pinnedVersion = "2025-11-25"

var implementation = &mcp.Implementation{Name: "mcpsup-bench", Version: "0"}

// client is the one operation the figures need, over each client kind.
type client interface {
	// call invokes the recording tool with id once.
	call(ctx context.Context, id string) error
	close()
}

func recordCall(id string) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: mcptest.RecordTool, Arguments: mcptest.IDArgs{ID: id}}
}

// dialSDK opens a go-sdk session with the baselines' settings.
func dialSDK(ctx context.Context, endpoint string, hc *http.Client, noStream bool) (*mcp.ClientSession, error) {
	c := mcp.NewClient(implementation, nil)
	return c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: noStream},
		&mcp.ClientSessionOptions{ProtocolVersion: pinnedVersion})
}

type bareClient struct{ sess *mcp.ClientSession }

func (c *bareClient) call(ctx context.Context, id string) error {
	_, err := c.sess.CallTool(ctx, recordCall(id))
	return err
}

func (c *bareClient) close() { _ = c.sess.Close() }

// wireClient is a go-sdk session on mcpsup's Transport alone (httpsession.Open),
// with no supervisor: figure 4's share of the wire layer. It calls as a
// bareClient does; close closes the wire session.
type wireClient struct {
	bareClient
	s *httpsession.Session
}

// newWireClient opens a wireClient with the standalone stream on, as the
// supervisor's default has it.
func newWireClient(ctx context.Context, endpoint string, hc *http.Client) (client, error) {
	s, err := httpsession.Open(ctx, httpsession.Options{Endpoint: endpoint, HTTPClient: hc, Era: httpsession.Era2025, Stream: httpsession.StreamOn})
	if err != nil {
		return nil, err
	}
	return &wireClient{bareClient: bareClient{sess: s.ClientSession()}, s: s}, nil
}

func (c *wireClient) close() { _ = c.s.Close() }

type reconnectClient struct {
	endpoint string
	hc       *http.Client
	sess     *mcp.ClientSession
}

func (c *reconnectClient) connect(ctx context.Context) error {
	sess, err := dialAndList(ctx, c.endpoint, c.hc)
	if sess != nil {
		c.sess = sess
	}
	return err
}

// dialAndList opens a go-sdk session with the baselines' settings and lists
// the tools, as a host does before its first call. The session is returned
// whenever it opened, also when the listing failed.
func dialAndList(ctx context.Context, endpoint string, hc *http.Client) (*mcp.ClientSession, error) {
	sess, err := dialSDK(ctx, endpoint, hc, false)
	if err != nil {
		return nil, err
	}
	_, err = sess.ListTools(ctx, nil)
	return sess, err
}

func (c *reconnectClient) call(ctx context.Context, id string) error {
	_, err := c.sess.CallTool(ctx, recordCall(id))
	if err != nil {
		_ = c.sess.Close()
		if rerr := c.connect(ctx); rerr != nil {
			return errors.Join(err, rerr)
		}
	}
	return err
}

func (c *reconnectClient) close() { _ = c.sess.Close() }

type supervisedClient struct{ sup *supervisor.Supervisor }

func (c *supervisedClient) call(ctx context.Context, id string) error {
	_, err := c.sup.CallTool(ctx, recordCall(id))
	return err
}

func (c *supervisedClient) close() { _ = c.sup.Close() }

// startSupervisor starts a supervisor on cfg (Endpoint and HTTPClient
// filled in) and waits for ready.
func startSupervisor(ctx context.Context, endpoint string, hc *http.Client, cfg supervisor.Config) (*supervisor.Supervisor, error) {
	sup, _, err := startTimed(ctx, endpoint, hc, cfg)
	return sup, err
}

// startTimed is startSupervisor that also returns the time from Start until
// ready (or until the wait failed, when the supervisor is closed).
func startTimed(ctx context.Context, endpoint string, hc *http.Client, cfg supervisor.Config) (*supervisor.Supervisor, time.Duration, error) {
	cfg.Endpoint, cfg.HTTP.HTTPClient = endpoint, hc
	sup, err := supervisor.New(cfg)
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	sup.Start()
	err = sup.WaitForState(ctx, supervisor.Ready)
	d := time.Since(start)
	if err != nil {
		_ = sup.Close()
		return nil, d, errors.Join(err, errors.New("state "+sup.State().String()))
	}
	return sup, d, nil
}

// newClient connects a client of kind k to endpoint and waits until it can
// call.
func newClient(ctx context.Context, k Client, endpoint string, hc *http.Client) (client, error) {
	switch k {
	case Supervised:
		sup, err := startSupervisor(ctx, endpoint, hc, supervisor.Config{Name: "bench"})
		if err != nil {
			return nil, err
		}
		return &supervisedClient{sup: sup}, nil
	case ReconnectOnError:
		c := &reconnectClient{endpoint: endpoint, hc: hc}
		if err := c.connect(ctx); err != nil {
			return nil, err
		}
		return c, nil
	default:
		sess, err := dialSDK(ctx, endpoint, hc, false)
		if err != nil {
			return nil, err
		}
		return &bareClient{sess: sess}, nil
	}
}

// settle waits until the gateway log has not grown for quiet, bounded by
// limit: background requests (a DELETE, a new stream) have landed.
func settle(ctx context.Context, log *mcptest.Log, quiet, limit time.Duration) {
	deadline := time.Now().Add(limit)
	last := len(log.Entries())
	for time.Now().Before(deadline) {
		wait, cancel := context.WithTimeout(ctx, quiet)
		err := log.WaitFunc(wait, last+1, func(mcptest.Entry) bool { return true })
		cancel()
		if err != nil {
			return // quiet for the whole span (or ctx ended)
		}
		last = len(log.Entries())
	}
}
