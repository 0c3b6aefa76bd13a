package httpsession

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// acceptEncoding is the Accept-Encoding the conn sends: set, it keeps
// net/http from inflating without bound; the conn decodes gzip itself,
// bounded on the wire and decoded ([Config.MaxJSONBody]).
const acceptEncoding = "gzip"

// errUnsupportedEncoding is the failure of a Content-Encoding other than
// identity and gzip, the one coding asked for (RFC 9110 section 12.5.3).
var errUnsupportedEncoding = errors.New("unsupported Content-Encoding")

// wireCounter counts the bytes read from an answer's body as sent, before
// any decoding, and keeps the wire's own read error (io.EOF aside).
type wireCounter struct {
	r   io.Reader
	n   int64
	err error
}

func (c *wireCounter) Read(p []byte) (int, error) {
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

// decoderOf returns a reader of resp's body, read from src, decoded,
// counting the bytes on the wire into wc, which it resets. A coding other
// than identity and gzip returns errUnsupportedEncoding.
func decoderOf(resp *http.Response, src io.Reader, wc *wireCounter) (io.Reader, error) {
	*wc = wireCounter{r: src}
	switch enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding"))); enc {
	case "", "identity":
		return wc, nil
	case "gzip", "x-gzip":
		return &lazyGzip{src: wc}, nil
	default:
		return nil, fmt.Errorf("%w %.40q", errUnsupportedEncoding, enc)
	}
}

// bounded is an answer body read with a bound.
type bounded struct {
	data []byte // the decoded bytes read, at most the bound
	over bool   // the body is longer than the bound, on the wire or decoded
	err  error  // a read or decode error before the end or the bound
	// broken: err is the read's, after the headers (a reset, a body cut
	// short of its Content-Length), not a decoder's refusal: no complete
	// HTTP answer came.
	broken bool
}

// readBounded reads resp's body whole if it fits in limit bytes both on the
// wire and decoded, and at most limit bytes of it otherwise. It closes the
// body.
func readBounded(resp *http.Response, limit int) bounded {
	defer resp.Body.Close()
	var wire wireCounter
	r, err := decoderOf(resp, io.LimitReader(resp.Body, int64(limit)+1), &wire)
	if err != nil {
		return bounded{err: err}
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	b := bounded{data: data, err: err, broken: err != nil && wire.err != nil}
	if len(data) > limit || wire.n > int64(limit) {
		b.over, b.err, b.broken = true, nil, false
		b.data = data[:min(len(data), limit)]
	}
	return b
}
