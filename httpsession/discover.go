package httpsession

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/httpsession/sse"
)

// maxDiscoverAnswer bounds what [Session.Discover] reads of an answer.
const maxDiscoverAnswer = 1 << 20

// ErrNoDiscoverAnswer is matched (errors.Is) by the error of a
// [Session.Discover] whose answer held no JSON-RPC response to it.
var ErrNoDiscoverAnswer = errors.New("mcpsup/httpsession: server/discover answer holds no response to it")

// Discover sends one `server/discover` (SEP-2575) outside go-sdk, which
// has no API for it, and reports whether the server answered it with a
// result: the 2026-07-28 liveness request, that era having no `ping`. It
// carries the SEP-2575 `_meta` triple (protocol version,
// [Options.ClientInfo], empty capabilities). The error is a *jsonrpc.Error
// the server answered (any HTTP status), one wrapping [ErrNoDiscoverAnswer]
// for an answer (read up to 1 MiB) without a response to it, or the
// request's; a context with [WithExchange] gets the record. Safe for
// concurrent use.
func (s *Session) Discover(ctx context.Context) error {
	// Numbered past the id shift, as go-sdk's ids are (idshift.go).
	id := "mcpsup-discover-" + strconv.FormatUint(uint64(s.c.shift)+s.probes.Add(1), 10)
	params, err := json.Marshal(&mcp.DiscoverParams{Meta: mcp.Meta{
		mcp.MetaKeyProtocolVersion:    cmp.Or(s.info.ProtocolVersion, era20260728),
		mcp.MetaKeyClientInfo:         s.clientInfo,
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}})
	if err != nil {
		return err
	}
	rid, _ := jsonrpc.MakeID(id)
	req, err := s.c.post(ctx, &jsonrpc.Request{ID: rid, Method: methodDiscover, Params: params})
	if err != nil {
		return err
	}
	x := s.c.begin(req)
	x.Method, x.RequestID = methodDiscover, strconv.Quote(id)
	resp, err := s.c.send(req, s.c.cfg.RequestTimeout)
	if err != nil {
		err = urlError(req, err)
	}
	s.c.fill(&x, resp, err)
	if err != nil {
		s.c.finish(req.Context(), x)
		return err
	}
	answer := io.Reader(io.LimitReader(resp.Body, maxDiscoverAnswer))
	if x.Status < 200 || x.Status >= 300 {
		answer = bytes.NewReader(s.c.readErrorBody(&x, resp))
		x.SessionGone = sessionGone(x)
	}
	s.c.finish(req.Context(), x)
	defer resp.Body.Close()
	msg, err := discoverResponse(answer, x.ContentType, id)
	switch {
	case err != nil:
		return fmt.Errorf("%w (HTTP %d): %v", ErrNoDiscoverAnswer, resp.StatusCode, err)
	case msg.Error != nil:
		return msg.Error // a *jsonrpc.Error
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		return fmt.Errorf("%w: HTTP %d", ErrNoDiscoverAnswer, resp.StatusCode)
	}
	return nil
}

// discoverResponse finds the JSON-RPC response with id in a JSON body or an
// event stream's message events.
func discoverResponse(r io.Reader, contentType, id string) (*jsonrpc.Response, error) {
	match := func(data []byte) *jsonrpc.Response {
		msg, _ := jsonrpc.DecodeMessage(data)
		if resp, ok := msg.(*jsonrpc.Response); ok && resp.ID.Raw() == any(id) {
			return resp
		}
		return nil
	}
	if contentType != "text/event-stream" {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		if resp := match(data); resp != nil {
			return resp, nil
		}
		return nil, errors.New("no response with the request's id")
	}
	events := sse.Reader{Max: maxDiscoverAnswer}
	events.Reset(r)
	for {
		ev, err := events.Next()
		switch err.(type) {
		case nil:
			if resp := match(ev.Data); resp != nil && ev.Message() {
				return resp, nil
			}
		case *sse.LineError: // as WHATWG takes it: a field without a value
		default:
			if errors.Is(err, io.EOF) {
				return nil, errors.New("the stream ended without a response with the request's id")
			}
			return nil, err
		}
	}
}
