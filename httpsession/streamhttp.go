package httpsession

import (
	"context"
	"io"
	"net/http"
	"sync"
)

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
