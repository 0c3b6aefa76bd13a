package httpsession

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// acceptEncoding is the Accept-Encoding the Transport sends: set, it keeps
// net/http from inflating without bound; the Transport decodes gzip itself,
// bounded on the wire and decoded ([Config.MaxJSONBody]).
const acceptEncoding = "gzip"

// errUnsupportedEncoding is the failure of a Content-Encoding other than
// identity and gzip, the one coding asked for (RFC 9110 section 12.5.3).
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

// decodedBodyInto returns a reader of resp's decoded body, counting the
// bytes on the wire into wc, which it resets. wireLimit > 0 stops the wire
// after that many bytes plus one (past the bound, tellably). An unsupported
// coding returns errUnsupportedEncoding.
func decodedBodyInto(resp *http.Response, wireLimit int64, wc *wireCounter) (io.Reader, error) {
	var src io.Reader = resp.Body
	if wireLimit > 0 {
		src = io.LimitReader(src, wireLimit+1)
	}
	return decoderOf(resp, src, wc)
}

// decoderOf is decodedBodyInto reading the wire from src.
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

// boundedReads are the readers of one [readBounded], in one allocation:
// the wire limited to the bound plus one byte, its counter, and the decoded
// bytes limited the same way.
type boundedReads struct {
	wire    io.LimitedReader
	count   wireCounter
	decoded io.LimitedReader
}

// maxPresized bounds the buffer readBounded sizes by Content-Length before
// a byte came: past it, the buffer grows with what arrives, so a length the
// server claims costs no more than what it sends.
const maxPresized = 64 << 10

// readBounded reads resp's body whole if it fits in limit bytes both on the
// wire and decoded, and at most limit bytes of it otherwise. A body without
// coding whose Content-Length is within both bounds is read into one buffer
// of that size. It closes the body.
func readBounded(resp *http.Response, limit int) bounded {
	defer resp.Body.Close()
	rd := &boundedReads{wire: io.LimitedReader{R: resp.Body, N: int64(limit) + 1}}
	r, err := decoderOf(resp, &rd.wire, &rd.count)
	if err != nil {
		return bounded{err: err}
	}
	rd.decoded = io.LimitedReader{R: r, N: int64(limit) + 1}
	var data []byte
	if n := resp.ContentLength; n >= 0 && n < maxPresized && n <= int64(limit) && r == io.Reader(&rd.count) {
		data, err = readAll(&rd.decoded, int(n)+1) // room for the read that sees the end
	} else {
		data, err = io.ReadAll(&rd.decoded)
	}
	b := bounded{data: data, err: err, broken: err != nil}
	if len(data) > limit || rd.count.n > int64(limit) {
		b.over, b.err, b.broken = true, nil, false
		b.data = data[:min(len(data), limit)]
	}
	return b
}

// readAll is io.ReadAll into a buffer of size bytes, grown only when r
// holds more than its length said.
func readAll(r io.Reader, size int) ([]byte, error) {
	b := make([]byte, 0, size)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
	}
}
