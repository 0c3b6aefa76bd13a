// Package wirebody reads an HTTP answer's body as mcpsup's streamable HTTP
// transport takes it: gzip asked for and decoded here (net/http's own
// decoding has no bound), every body bounded both on the wire and decoded.
// It knows nothing of MCP or of a session.
package wirebody

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// AcceptEncoding is the Accept-Encoding to send: set, it keeps net/http
// from inflating without bound, and [Decode] decodes what it asks for.
const AcceptEncoding = "gzip"

// ErrUnsupportedEncoding is the failure of a Content-Encoding other than
// identity and gzip, the one coding asked for (RFC 9110 section 12.5.3).
var ErrUnsupportedEncoding = errors.New("unsupported Content-Encoding")

// Counter counts the bytes read from a body as sent, before any decoding,
// and keeps the wire's own read error (io.EOF aside). One goroutine reads.
type Counter struct {
	r   io.Reader
	n   int64
	err error
}

// N returns the bytes read from the wire so far.
func (c *Counter) N() int64 { return c.n }

func (c *Counter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF && c.err == nil {
		c.err = err
	}
	return n, err
}

// lazyGzip reads the gzip header on the first Read: an event stream's
// first bytes may be long in coming.
type lazyGzip struct {
	src io.Reader
	zr  *gzip.Reader
	err error
}

func (z *lazyGzip) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	if z.zr == nil {
		zr, err := gzip.NewReader(z.src)
		if err != nil {
			z.err = fmt.Errorf("gzip: %w", err)
			return 0, z.err
		}
		z.zr = zr
	}
	n, err := z.zr.Read(p)
	if err != nil && err != io.EOF {
		err = fmt.Errorf("gzip: %w", err)
		z.err = err
	}
	return n, err
}

// Decode returns a reader of resp's body, read from src, decoded (identity
// or gzip; a gzip error reads as "gzip: ..."), counting the bytes on the
// wire into wire, which it resets. Another coding returns an error
// matching [ErrUnsupportedEncoding].
func Decode(resp *http.Response, src io.Reader, wire *Counter) (io.Reader, error) {
	*wire = Counter{r: src}
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return wire, nil
	case "gzip", "x-gzip":
		return &lazyGzip{src: wire}, nil
	default:
		return nil, fmt.Errorf("%w %.40q", ErrUnsupportedEncoding, enc)
	}
}

// Body is an answer's body read with a bound.
type Body struct {
	Data []byte // the decoded bytes read, at most the bound
	Over bool   // the body is longer than the bound, on the wire or decoded
	Err  error  // a read or decode error before the end or the bound
	// Broken: Err is the read's, after the headers (a reset, a body cut
	// short of its Content-Length), not a decoder's refusal: no complete
	// HTTP answer came.
	Broken bool
}

// Read reads resp's body whole if it fits in limit bytes both on the wire
// and decoded, and at most limit bytes of it otherwise, whatever its
// Content-Length says. It closes the body.
func Read(resp *http.Response, limit int) Body {
	defer resp.Body.Close()
	var wire Counter
	r, err := Decode(resp, io.LimitReader(resp.Body, int64(limit)+1), &wire)
	if err != nil {
		return Body{Err: err}
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	b := Body{Data: data, Err: err, Broken: err != nil && wire.err != nil}
	if len(data) > limit || wire.n > int64(limit) {
		b.Over, b.Err, b.Broken = true, nil, false
		b.Data = data[:min(len(data), limit)]
	}
	return b
}
