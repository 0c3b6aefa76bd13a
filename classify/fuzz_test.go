package classify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// buildTree turns fuzz bytes into an error tree. Each opcode byte pushes a
// leaf or combines the values on top of a stack: messages (with embedded
// JSON), %w wraps, joins, HTTPError facts, go-sdk errors, and cycles.
func buildTree(data []byte) error {
	var stack []error
	var nodes []*node
	pop := func() error {
		if len(stack) == 0 {
			return nil
		}
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return e
	}
	next := func() byte {
		if len(data) == 0 {
			return 0
		}
		b := data[0]
		data = data[1:]
		return b
	}
	text := func() string {
		n := min(int(next()), len(data))
		s := string(data[:n])
		data = data[n:]
		return s
	}
	leaves := []error{context.Canceled, context.DeadlineExceeded, mcp.ErrSessionMissing, mcp.ErrConnectionClosed,
		io.EOF, io.ErrUnexpectedEOF, syscall.ECONNREFUSED, syscall.ECONNRESET, rejected, netErr{true}, netErr{false},
		syntaxError(), (*HTTPError)(nil), panicUnwrap{}, &panicText{}, sliceErr{parts: []string{"s"}}}
	for steps := 0; len(data) > 0 && steps < 256; steps++ {
		switch op := next(); op % 10 {
		case 0:
			stack = append(stack, errors.New(text()))
		case 1:
			stack = append(stack, leaves[int(next())%len(leaves)])
		case 2:
			stack = append(stack, fmt.Errorf("%s: %w", text(), pop()))
		case 3:
			stack = append(stack, errors.Join(pop(), pop(), pop()))
		case 4:
			status := int(next()) * 3
			ra := time.Duration(next()) * time.Second
			h := &HTTPError{Exchange: Exchange{Verb: "POST", Method: "tools/call", RequestID: "3", Status: status, RetryAfter: ra, SessionIDSent: op&0x10 != 0, Malformed: op&0x20 != 0}, Err: pop()}
			body := text()
			if r, ok := ParseRPCError([]byte(body)); ok {
				h.RPC, h.BodyRPCID = r.RPCError, r.ID
			}
			if op&0x40 != 0 {
				h.WWWAuthenticate = text()
			}
			h.Body = cut(body, MaxBodySnippet)
			stack = append(stack, h)
		case 5:
			stack = append(stack, &jsonrpc.Error{Code: -int64(next()) - 32500, Message: text()})
		case 6:
			n := &node{msg: text(), next: pop()}
			nodes = append(nodes, n)
			stack = append(stack, n)
		case 7:
			// Close a cycle: an earlier node now wraps the top of the stack.
			if len(nodes) > 0 && len(stack) > 0 {
				nodes[int(next())%len(nodes)].next = stack[len(stack)-1]
			}
		case 8:
			stack = append(stack, &fan{msg: text(), kids: []error{pop(), pop()}})
		case 9:
			stack = append(stack, sliceErr{parts: []string{text()}, next: pop()})
		}
	}
	return errors.Join(stack...)
}

func FuzzClassify(f *testing.F) {
	f.Add([]byte{0, 5, 'h', 'e', 'l', 'l', 'o'})
	f.Add(append([]byte{0, byte(len(s1Body))}, s1Body...))
	f.Add(append([]byte{4 | 0x10, 133, 0, byte(len(s2Body))}, s2Body...)) // 400 + S2 body
	f.Add([]byte{1, 2, 2, 1, 'x', 4, 143, 30, 0})                         // 429 around a wrapped session miss
	f.Add([]byte{6, 1, 'a', 6, 1, 'b', 7, 0, 3})                          // a cycle through a join
	f.Add([]byte{1, 0, 1, 9, 3, 8, 1, 'f', 7, 0})
	f.Add([]byte{4 | 0x40, 134, 0, 0, 30, 'B', 'e', 'a', 'r', 'e', 'r', ' ', 'e', 'r', 'r', 'o', 'r', '=', 'i', 'n', 's', 'u', 'f', 'f', 'i', 'c', 'i', 'e', 'n', 't', '_', 's', 'c', 'o', 'p', 'e'})
	f.Fuzz(func(t *testing.T, data []byte) {
		err := buildTree(data)
		for _, ctx := range []context.Context{noCaller, context.Background()} {
			v := Classify(ctx, err)
			if err == nil {
				if v != (Verdict{}) {
					t.Fatalf("nil error gave %v", v)
				}
				continue
			}
			if v.Class == None || v.Class >= numClasses {
				t.Fatalf("error %q gave class %v", v.Detail, v.Class)
			}
			if len(v.Detail) > MaxDetail || len(v.RPC.Message) > MaxDetail {
				t.Fatalf("unbounded text in %v", v)
			}
		}
	})
}

func FuzzParseRPCError(f *testing.F) {
	for _, s := range []string{s1Body, s2Body, s2BodyNoID, paramsBody, `{"jsonrpc":"2.0","id":1,"result":{}}`,
		`<html>`, `[[[[`, `{"jsonrpc":"2.0","id":{"a":[1]},"error":{"code":9223372036854775807,"message":"\u00e9"}}`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, ok := ParseRPCError(b)
		if !ok {
			if r != (BodyRPCError{}) {
				t.Fatalf("rejected input gave %+v", r)
			}
			return
		}
		if !r.Present || len(r.Message) > MaxDetail {
			t.Fatalf("bad result %+v", r)
		}
		if r.HasID != (r.ID != "" && r.ID != "null") {
			t.Fatalf("HasID %v for id %q", r.HasID, r.ID)
		}
		// The same bytes embedded in a message are found the same way.
		if e, ok := embeddedRPCError("prefix: " + string(b)); ok && b[0] == '{' && e != r.RPCError {
			t.Fatalf("embedded %+v, body %+v", e, r.RPCError)
		}
	})
}
