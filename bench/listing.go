package bench

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsup/mcpsup/mcptest"
	"github.com/mcpsup/mcpsup/supervisor"
)

// ListingFailures is how many tools/list requests of a fresh connect the
// gateway refuses in the failed-listing figure (403 with an HTML page, a
// web application firewall) before it lets them pass.
const ListingFailures = 3

// ListingResult is the cost of a fresh connect whose tools/list is refused
// ListingFailures times, for one client.
type ListingResult struct {
	Client Client
	// Extra counts the requests the gateway saw until the client could
	// call (or gave up) and the wire went quiet, beyond those of the same
	// client's clean connect on a fault-free server.
	Extra int
	// Breakdown lists every request of the faulted connect by JSON-RPC
	// method (POST) or HTTP verb.
	Breakdown string
	// Ready tells whether the client listed the tools in the end.
	Ready bool
	// Err is set when the scenario itself could not run.
	Err error
}

// PerFailure is Extra per refused listing.
func (r ListingResult) PerFailure() float64 { return float64(r.Extra) / ListingFailures }

// listingRetryBackoff keeps mcpsup's retries quick in the figure; the
// requests counted do not depend on it.
var listingRetryBackoff = supervisor.Backoff{InitialInterval: 10 * time.Millisecond, MaxInterval: 50 * time.Millisecond, NoJitter: true}

// FailedListings runs the failed-listing figure for every client.
func FailedListings(ctx context.Context) []ListingResult {
	var out []ListingResult
	for _, k := range Clients {
		out = append(out, listingOne(ctx, k))
	}
	return out
}

func listingOne(ctx context.Context, k Client) ListingResult {
	res := ListingResult{Client: k}
	clean, _, _, err := connectListing(ctx, k, false)
	if err != nil {
		res.Err = fmt.Errorf("clean connect: %w", err)
		return res
	}
	faulted, which, ready, err := connectListing(ctx, k, true)
	if err != nil {
		res.Err = err
		return res
	}
	res.Extra, res.Breakdown, res.Ready = faulted-clean, which, ready
	return res
}

// connectListing connects client k to a fresh server, the first
// ListingFailures tools/list refused when refuse is set, and returns the
// requests the gateway saw until the wire was quiet, their breakdown, and
// whether the tools were listed. The baselines retry ListTools up to
// ListingFailures+1 times: reconnect-on-error on a new session each time,
// bare go-sdk on its one session.
func connectListing(ctx context.Context, k Client, refuse bool) (int, string, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	srv, err := mcptest.NewServer(mcptest.Options{Tools: 1})
	if err != nil {
		return 0, "", false, err
	}
	defer srv.Close()
	if refuse {
		srv.Gateway().Add(mcptest.Rule{
			Match:  mcptest.Match{Verb: http.MethodPost, Method: "tools/list", Occurrence: mcptest.FirstN(ListingFailures)},
			Action: mcptest.HTML(http.StatusForbidden, mcptest.ForbiddenPage),
		})
	}
	ready := false
	switch k {
	case Supervised:
		sup, err := startSupervisor(ctx, srv.URL(), srv.HTTPClient(), supervisor.Config{Name: "bench", Recovery: supervisor.RecoveryConfig{Backoff: listingRetryBackoff}})
		if err != nil {
			return 0, "", false, err
		}
		defer sup.Close()
		ready = len(sup.Catalog().Tools) > 0
	case ReconnectOnError:
		var sess *mcp.ClientSession
		for range ListingFailures + 1 {
			if sess != nil {
				_ = sess.Close()
			}
			sess, err = dialAndList(ctx, srv.URL(), srv.HTTPClient())
			if err == nil {
				ready = true
				break
			}
		}
		if sess != nil {
			defer sess.Close()
		}
	default:
		sess, err := dialSDK(ctx, srv.URL(), srv.HTTPClient(), false)
		if err != nil {
			return 0, "", false, err
		}
		defer sess.Close()
		for range ListingFailures + 1 {
			if _, err := sess.ListTools(ctx, nil); err == nil {
				ready = true
				break
			}
		}
	}
	log := srv.Log()
	settle(ctx, log, 150*time.Millisecond, 3*time.Second)
	n, which := countAll(log.Entries())
	return n, which, ready, nil
}

// countAll counts every request, with extraOf's breakdown.
func countAll(entries []mcptest.Entry) (int, string) {
	return extraOf(entries) // the connect sends no tools/call
}
