package httpsession

import (
	"context"
	"io"
	"net/http"
	"sync"
)

// withTimeout runs one exchange under Config.RequestTimeout: the request's
// context ends once the timeout passes or the answer's body is closed.
func (t *Transport) withTimeout(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithTimeout(req.Context(), t.cfg.RequestTimeout)
	resp, err := t.roundTrip(req.WithContext(ctx))
	if err != nil || resp == nil {
		cancel()
		return resp, err
	}
	resp.Body = &cancelOnClose{ReadCloser: resp.Body, cancel: cancel}
	return resp, nil
}

// cancelOnClose ends a timed exchange's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	once   sync.Once
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(c.cancel)
	return err
}

// withCookies gives a re-dial of the standalone stream the jar's cookies,
// in place of the ones go-sdk's GET carried when it was made.
func (t *Transport) withCookies(req *http.Request) {
	if t.cfg.Jar == nil {
		return
	}
	req.Header.Del("Cookie")
	for _, c := range t.cfg.Jar.Cookies(req.URL) {
		req.AddCookie(c)
	}
}

// keepCookies stores the cookies a re-dial's answer set.
func (t *Transport) keepCookies(req *http.Request, resp *http.Response) {
	if t.cfg.Jar == nil {
		return
	}
	if cs := resp.Cookies(); len(cs) > 0 {
		t.cfg.Jar.SetCookies(req.URL, cs)
	}
}
