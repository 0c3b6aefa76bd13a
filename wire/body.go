package wire

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// acceptEncoding is the Accept-Encoding the Transport sends on POST and
// DELETE. Setting it keeps net/http's transport from decompressing on its
// own, which it does with no bound on the inflated size: the Transport
// decodes gzip itself and bounds the bytes on the wire and the decoded bytes
// separately (see [Config.MaxJSONBody]).
const acceptEncoding = "gzip"

// errUnsupportedEncoding is the failure of an answer whose Content-Encoding
// is neither identity nor gzip (the only coding the Transport asks for,
// RFC 9110 section 12.5.3).
var errUnsupportedEncoding = errors.New("unsupported Content-Encoding")

// wireCounter counts the bytes read from an answer's body as sent, before
// any decoding.
type wireCounter struct {
	r io.Reader
	n int64
}

func (c *wireCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// lazyGzip is a gzip decoder that reads the gzip header on the first Read,
// not when it is made: RoundTrip must not wait for an event stream's first
// bytes.
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

// decodedBody returns a reader of resp's body after its Content-Encoding
// (identity or gzip) and the counter of its bytes on the wire. wireLimit > 0
// stops reading the wire after that many bytes plus one, so that a caller
// can tell an answer past its bound from one that fits. An unsupported
// coding returns errUnsupportedEncoding.
func decodedBody(resp *http.Response, wireLimit int64) (io.Reader, *wireCounter, error) {
	wc := new(wireCounter)
	r, err := decodedBodyInto(resp, wireLimit, wc)
	return r, wc, err
}

// decodedBodyInto is decodedBody counting into wc, which it resets.
func decodedBodyInto(resp *http.Response, wireLimit int64, wc *wireCounter) (io.Reader, error) {
	var src io.Reader = resp.Body
	if wireLimit > 0 {
		src = io.LimitReader(src, wireLimit+1)
	}
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
}

// readBounded reads resp's body whole if it fits in limit bytes both on the
// wire and decoded, and at most limit bytes of it otherwise. It closes the
// body.
func readBounded(resp *http.Response, limit int) bounded {
	defer resp.Body.Close()
	r, wc, err := decodedBody(resp, int64(limit))
	if err != nil {
		return bounded{err: err}
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	b := bounded{data: data, err: err}
	if len(data) > limit || wc.n > int64(limit) {
		b.over, b.err = true, nil
		b.data = data[:min(len(data), limit)]
	}
	return b
}
