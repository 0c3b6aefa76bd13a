package events_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/mcpsup/mcpsup/classify"
	"github.com/mcpsup/mcpsup/events"
)

// TestRedactorPatterns pins each pattern rule on text never registered.
func TestRedactorPatterns(t *testing.T) {
	var r events.Redactor
	h := events.HashSessionID
	for in, want := range map[string]string{
		// URL userinfo, also as net/http prints it (password "***").
		"https://user:pass@mcp.example.com/mcp":                 "https://[redacted]@mcp.example.com/mcp",
		`Post "https://ghp_tok@h.test/mcp": EOF`:                `Post "https://[redacted]@h.test/mcp": EOF`,
		`Post "https://user:***@h.test/mcp": dial tcp: refused`: `Post "https://[redacted]@h.test/mcp": dial tcp: refused`,
		"mail me at ops@example.com":                            "mail me at ops@example.com",
		// Credential-like query and key=value parameters.
		"GET /sse?token=abc&x=1":                                "GET /sse?token=[redacted]&x=1",
		"https://h.test/mcp?access_token=a.b.c#frag":            "https://h.test/mcp?access_token=[redacted]#frag",
		"?api_key=1&apikey=2&key=3&X-Amz-Signature=4&sig=5":     "?api_key=[redacted]&apikey=[redacted]&key=[redacted]&X-Amz-Signature=[redacted]&sig=[redacted]",
		"client_secret=s password=p auth=a X-Goog-Credential=c": "client_secret=[redacted] password=[redacted] auth=[redacted] X-Goog-Credential=[redacted]",
		"?author=ann&keyboard=us&monkey=1":                      "?author=ann&keyboard=us&monkey=1",
		"JSON-RPC code=-32601 Method not found":                 "JSON-RPC code=-32601 Method not found",
		// Headers in the usual renderings, also after another "name: ".
		"Authorization: Bearer abc.def":                    "Authorization: [redacted]",
		"failed: Authorization: Basic dXNlcjpwYXNz":        "failed: Authorization: [redacted]",
		`{"authorization":"Basic dXNlcjpwYXNz","x":1}`:     `{"authorization":"[redacted]","x":1}`,
		"map[Authorization:[Bearer t] Cookie:[c=1] X:[y]]": "map[Authorization:[[redacted]] Cookie:[[redacted]] X:[y]]",
		"Set-Cookie: a=b; Path=/":                          "Set-Cookie: [redacted]",
		"X-Api-Key: k1":                                    "X-Api-Key: [redacted]",
		"x-auth-token: k2":                                 "x-auth-token: [redacted]",
		"token bucket: empty":                              "token bucket: empty",
		// Credentials in text.
		"got bearer abc.def= back": "got bearer [redacted] back",
		"Basic dXNlcjpwYXNz":       "Basic [redacted]",
		"basic auth is off":        "basic auth is off",
		// Session ids where they are named, in go-sdk's forms.
		"failed to connect (session ID: abc-123): gone":                         "failed to connect (session ID: " + h("abc-123") + "): gone",
		"exceeded 5 retries without progress (session ID: abc-123)":             "exceeded 5 retries without progress (session ID: " + h("abc-123") + ")",
		"standalone SSE request failed (session ID: a)b): x":                    "standalone SSE request failed (session ID: " + h("a)b") + "): x",
		"session ID: abc-123":                                                   "session ID: " + h("abc-123"),
		"Mcp-Session-Id: abc-123":                                               "Mcp-Session-Id: " + h("abc-123"),
		"map[Mcp-Session-Id:[abc-123] X:[y]]":                                   "map[Mcp-Session-Id:[" + h("abc-123") + "] X:[y]]",
		`{"session_id":"abc-123"}`:                                              `{"session_id":"` + h("abc-123") + `"}`,
		`{"sessionId": "a\"b"}`:                                                 `{"sessionId": "` + h(`a"b`) + `"}`,
		"GET /sse?sessionid=abc-123&x=1":                                        "GET /sse?sessionid=" + h("abc-123") + "&x=1",
		`mismatching session IDs "abc" and "d\\e"`:                              `mismatching session IDs "` + h("abc") + `" and "` + h(`d\e`) + `"`,
		`MemoryEventStore.After: unknown session ID "abc"`:                      `MemoryEventStore.After: unknown session ID "` + h("abc") + `"`,
		`MemoryEventStore.After: unknown stream ID 3 in session "abc": no more`: `MemoryEventStore.After: unknown stream ID 3 in session "` + h("abc") + `": no more`,
		"(session ID: ): no session yet":                                        "(session ID: ): no session yet",
		`JSON-RPC -32000 "No valid session ID (session ID: Q7#2)": calling`:     `JSON-RPC -32000 "No valid session ID (session ID: ` + h("Q7#2") + `)": calling`,
		"(session ID: sid:0123abcd)":                                            "(session ID: sid:0123abcd)",
		"session idle: 5s":                                                      "session idle: 5s",
		"sessions opened: 3":                                                    "sessions opened: 3",
		"":                                                                      "",
	} {
		got := r.Text(in)
		require.Equal(t, want, got, in)
		require.Equal(t, got, r.Text(got), "idempotent: %s", in)
	}
}

// TestRegisteredIDsAreWholeTokens: a registered id is hashed wherever it
// stands as a token, in every escaped form, and never inside a longer word.
func TestRegisteredIDsAreWholeTokens(t *testing.T) {
	var r events.Redactor
	id := `7f3c2a9b/e1+d0"4c`
	r.AddSessionID(id)
	h := events.HashSessionID(id)
	for in, want := range map[string]string{
		"id " + id + " end":                "id " + h + " end",
		"(" + id + ")":                     "(" + h + ")",
		"q=" + url.QueryEscape(id):         "q=" + h,
		"/s/" + url.PathEscape(id) + "/x":  "/s/" + h + "/x",
		"got " + strconv.Quote(id):         "got \"" + h + "\"",
		"x" + id:                           "x" + id,
		id + "9":                           id + "9",
		"-" + id + "-":                     "-" + h + "-",
		"Mcp-Session-Id: " + id + "\nnext": "Mcp-Session-Id: " + h + "\nnext",
		"standalone SSE request failed (session ID: " + id + "): x": "standalone SSE request failed (session ID: " + h + "): x",
	} {
		got := r.Text(in)
		require.Equal(t, want, got, in)
		require.Equal(t, got, r.Text(got), "idempotent: %s", in)
	}
	r.ForgetSessionID(id)
	require.Equal(t, "id "+id+" end", r.Text("id "+id+" end"), "forgotten")
	require.Equal(t, 0, r.SessionIDs())
}

// One rule's mask can make another rule's match: a credential header's
// value ("token:" then "//0@") runs into the userinfo mask before it, and
// masking that leaves a userinfo the userinfo rule masks next. Text runs
// the rules until nothing changes (found by FuzzRedactorText).
func TestRulesRunToAFixedPoint(t *testing.T) {
	var r events.Redactor
	for in, want := range map[string]string{
		"A://token://0@":            "A://" + events.Masked + "@",
		"x https://token://u:p@h/y": "x https://" + events.Masked + "@h/y",
	} {
		got := r.Text(in)
		require.Equal(t, want, got, "%q", in)
		require.Equal(t, got, r.Text(got), "idempotent: %q", in)
	}
}

// An id whose edge is no letter or digit is a token where a letter or digit
// touches it, but its hash is all letters and digits at its edges: a space
// keeps the two apart, so the next pass does not read the hash as part of a
// longer id (Text stays idempotent; found by FuzzRedactorText).
func TestHashOfAnIDTouchingAWordStaysApart(t *testing.T) {
	var r events.Redactor
	long, short := "-7f3c2a9b-", "\x1e"
	r.AddSessionID(long)
	r.AddSessionID(short)
	hl, hs := events.HashSessionID(long), events.HashSessionID(short)
	for in, want := range map[string]string{
		"x" + long + "y":           "x " + hl + " y",
		"sessionId=" + short + "0": "sessionId=" + hs + " 0",
		"id " + long + " end":      "id " + hl + " end",
	} {
		got := r.Text(in)
		require.Equal(t, want, got, "%q", in)
		require.Equal(t, got, r.Text(got), "idempotent: %q", in)
	}
}

// TestShortSessionIDs: an id shorter than MinSessionIDLen is hashed where it
// is named as a session id, whole even when it holds punctuation, and nowhere
// else.
func TestShortSessionIDs(t *testing.T) {
	for _, id := range []string{"x", "s", "42", "a,b", "ready"} {
		t.Run(id, func(t *testing.T) {
			var r events.Redactor
			r.AddSessionID(id)
			h := events.HashSessionID(id)
			for in, want := range map[string]string{
				"Mcp-Session-Id: " + id:                          "Mcp-Session-Id: " + h,
				"map[Mcp-Session-Id:[" + id + "]]":               "map[Mcp-Session-Id:[" + h + "]]",
				"session " + strconv.Quote(id) + " ended":        `session "` + h + `" ended`,
				"failed to connect (session ID: " + id + "): no": "failed to connect (session ID: " + h + "): no",
				"sessionid=" + id:                                "sessionid=" + h,
			} {
				require.Equal(t, want, r.Text(in), in)
			}
			plain := "x marks the spot, s 42 ready state, retry after 42s"
			require.Equal(t, plain, r.Text(plain), "not rewritten outside a session id context")
			e := events.Event{Kind: events.KindTransition, From: "ready", To: "connecting", Trigger: "session-died", Reason: "churn", Op: "tools/call", Delivery: events.DeliveryAnswered}
			require.Equal(t, e, r.Redact(e))
		})
	}
}

// vocabulary is every fixed word an event may carry.
var vocabulary = []string{
	string(events.KindTransition), string(events.KindProbeReport), string(events.KindCatalogChanged), string(events.KindCallFailed),
	string(events.KindStreamDisabled), string(events.KindStreamEnabled), string(events.KindStreamEventDropped), string(events.KindStreamDeclined), string(events.KindResponseDropped), string(events.KindServerRequestRefused),
	string(events.KindRetryScheduled), string(events.KindRateLimitWindow),
	string(events.KindSessionOpened), string(events.KindSessionEnded), string(events.KindCallResent), string(events.KindCallReissued), "session-verified",
	events.DeliveryNotSent, events.DeliveryOutcomeUnknown,
	events.DeliveryAnswered, events.ListPresent, events.ListAbsent, events.ListDegraded, events.ListFailed,
	"idle", "connecting", "resuming-blind", "resuming-known", "probing", "listing-declared", "ready",
	"stale-recovering", "failed", "closed", "call-failed", "session-died", "handshake-failed", "retry-due",
	"unauthorized", "canceled", "budget-spent", "churn", "tools/call", "prompts/get", "resources/read",
	"tools", "resources", "prompts", "resource-templates", "strict+not-canceled", "s", "a", "-", "sid:0",
}

// TestRedactionNeverRewritesVocabulary is a property: whatever ids and
// secrets are registered (vocabulary words and their parts included), the
// fixed vocabulary fields of an event come out as they went in, and every
// registered id and secret is gone from the free text.
func TestRedactionNeverRewritesVocabulary(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		word := rapid.SampledFrom(vocabulary)
		anyText := rapid.OneOf(word, rapid.StringMatching(`[ -~]{0,12}`))
		var r events.Redactor
		ids := rapid.SliceOfN(anyText, 0, 6).Draw(t, "ids")
		for _, id := range ids {
			r.AddSessionID(id)
		}
		secrets := rapid.SliceOfN(rapid.StringMatching(`[A-Za-z0-9]{12,20}`), 0, 2).Draw(t, "secrets")
		for _, s := range secrets {
			r.AddSecret(s)
		}
		v := classify.Verdict{Class: classify.Class(rapid.IntRange(0, 12).Draw(t, "class")), Method: word.Draw(t, "method"),
			Detail: strings.Join(append(append([]string{}, ids...), secrets...), " ")}
		e := events.Event{
			Kind: events.Kind(word.Draw(t, "kind")), From: events.State(word.Draw(t, "from")), To: events.State(word.Draw(t, "to")),
			Trigger: events.Trigger(word.Draw(t, "trigger")), Guard: word.Draw(t, "guard"), Reason: events.Reason(word.Draw(t, "reason")),
			Op: word.Draw(t, "op"), Delivery: word.Draw(t, "delivery"), Verdict: v,
			Lists:  []events.ListOutcome{{List: word.Draw(t, "list"), Status: word.Draw(t, "status"), Verdict: v}},
			Detail: v.Detail,
		}
		red := r.Redact(e)
		if red.Kind != e.Kind || red.From != e.From || red.To != e.To || red.Trigger != e.Trigger ||
			red.Guard != e.Guard || red.Reason != e.Reason || red.Op != e.Op || red.Delivery != e.Delivery ||
			red.Verdict.Class != e.Verdict.Class || red.Verdict.Method != e.Verdict.Method ||
			red.Lists[0].List != e.Lists[0].List || red.Lists[0].Status != e.Lists[0].Status {
			t.Fatalf("vocabulary rewritten:\n in  %+v\n out %+v", e, red)
		}
		for _, id := range ids {
			if len(id) >= events.MinSessionIDLen && tokenIn(red.Detail, id) {
				t.Fatalf("registered id %q survived in %q", id, red.Detail)
			}
		}
		for _, s := range secrets {
			if strings.Contains(red.Detail, s) {
				t.Fatalf("secret %q survived in %q", s, red.Detail)
			}
		}
		if again := r.Redact(red); again.Detail != red.Detail {
			t.Fatalf("not idempotent: %q -> %q", red.Detail, again.Detail)
		}
	})
}

// tokenIn reports whether id stands in s as a whole token.
func tokenIn(s, id string) bool {
	word := func(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
	for i := 0; ; {
		j := strings.Index(s[i:], id)
		if j < 0 {
			return false
		}
		j += i
		end := j + len(id)
		startOK := j == 0 || !word(s[j-1]) || !word(id[0])
		endOK := end == len(s) || !word(s[end]) || !word(id[len(id)-1])
		if startOK && endOK {
			return true
		}
		i = j + 1
	}
}

// BenchmarkRedactor registers one more session id and redacts a go-sdk
// error text with 1 and 20,000 ids already registered.
func BenchmarkRedactor(b *testing.B) {
	for _, past := range []int{1, 20000} {
		var r events.Redactor
		for i := range past {
			r.AddSessionID(fmt.Sprintf("%032x", i))
		}
		b.Run(fmt.Sprintf("register/past=%d", past), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				id := fmt.Sprintf("new-%028x", i)
				r.AddSessionID(id)
				r.ForgetSessionID(id)
			}
		})
		live := fmt.Sprintf("%032x", past-1)
		e := events.Event{Kind: events.KindCallFailed, Server: "https://user:pass@mcp.example.com/mcp?token=t",
			Op: "tools/call", Name: "search", Delivery: events.DeliveryAnswered,
			Verdict: classify.Verdict{Class: classify.SessionExpired, HTTPStatus: 404, Method: "tools/call",
				Detail: `calling "tools/call": sending "tools/call": failed to connect (session ID: ` + live + `): session not found`},
			Detail: "session " + live + " ended by itself"}
		b.Run(fmt.Sprintf("redact-event/past=%d", past), func(b *testing.B) {
			for b.Loop() {
				if red := r.Redact(e); strings.Contains(red.Detail, live) {
					b.Fatal("leak")
				}
			}
		})
	}
}

// BenchmarkRedactorHostileMiB redacts 1 MiB texts built to cost most: one
// line of many named values, many names without a value, a name whose
// parts run on, quotes left open.
func BenchmarkRedactorHostileMiB(b *testing.B) {
	const size = 1 << 20
	fill := func(unit string) string { return strings.Repeat(unit, size/len(unit)) }
	cases := map[string]string{
		"credentials-one-line": fill("token=abcdef "),
		"headers-lines":        fill("Authorization: abcdef\n"),
		"session-ids-one-line": fill("sessionid=abcdef "),
		"names-without-values": fill("token token "),
		"name-parts-run-on":    "x" + fill("-token") + " ",
		"open-quotes":          fill(`"token":"`),
		"gosdk-form":           fill("(session ID: a) "),
		"bearer":               fill("Bearer abcdefgh "),
	}
	var r events.Redactor
	r.AddSessionID("0123456789abcdef0123456789abcdef")
	for name, text := range cases {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				r.Text(text)
			}
		})
	}
}

// goSDKForm is one way go-sdk (mcp/streamable.go, mcp/event.go), header
// dumps, JSON or URLs name session ids: the text with ids a and b, and the
// text redaction must make of it, given their hashes.
type goSDKForm struct {
	text func(a, b string) string
	want func(ha, hb string) string
}

func same(f func(a, b string) string) goSDKForm { return goSDKForm{f, f} }

var goSDKForms = []goSDKForm{
	same(func(a, _ string) string {
		return "sending \"tools/call\": failed to connect (session ID: " + a + "): session not found"
	}),
	same(func(a, _ string) string { return "GET: exceeded 5 retries without progress (session ID: " + a + ")" }),
	same(func(a, _ string) string { return "standalone SSE request failed (session ID: " + a + "): EOF" }),
	same(func(a, b string) string { return fmt.Sprintf("mismatching session IDs %q and %q", a, b) }),
	same(func(a, _ string) string { return fmt.Sprintf("MemoryEventStore.After: unknown session ID %q", a) }),
	same(func(a, _ string) string { return fmt.Sprintf("index 3, stream ID 1, session %q: gone", a) }),
	same(func(a, b string) string { q, _ := json.Marshal(a); return `{"sessionId":` + string(q) + `}` }),
	{func(a, _ string) string { return "GET /sse?sessionid=" + url.QueryEscape(a) + "&x=1" },
		func(ha, _ string) string { return "GET /sse?sessionid=" + ha + "&x=1" }},
}

// TestNamedSessionIDsNeverSurvive is a property: ids of any length and any
// visible ASCII, never registered, in any of go-sdk's forms, also quoted once
// more as classify.HTTPError quotes a JSON-RPC message, are replaced by their
// hashes, nothing else is changed, and redaction is idempotent.
func TestNamedSessionIDsNeverSurvive(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		form := rapid.SampledFrom(goSDKForms).Draw(t, "form")
		a := rapid.StringMatching(`[!-~]{1,40}`).Draw(t, "a")
		b := rapid.StringMatching(`[!-~]{1,40}`).Draw(t, "b")
		text, want := form.text(a, b), form.want(events.HashSessionID(a), events.HashSessionID(b))
		if rapid.Bool().Draw(t, "quoted again") {
			if strings.ContainsAny(a+b, `"\<>&`) {
				// Hidden, but hashed in its escaped form: the hash differs.
				t.Skip("an id quoted twice is not unescaped twice")
			}
			text, want = "JSON-RPC -32000 "+strconv.Quote(text)+": calling", "JSON-RPC -32000 "+strconv.Quote(want)+": calling"
		}
		var r events.Redactor
		red := r.Text(text)
		if red != want {
			t.Fatalf("redacted %q\n got  %q\n want %q", text, red, want)
		}
		if again := r.Text(red); again != red {
			t.Fatalf("not idempotent: %q -> %q", red, again)
		}
	})
}

// Two ids of one length and first byte: forgetting one keeps the other
// hashed, forgetting both hashes neither (the length and first-byte index
// counts forms, not ids).
func TestForgetOneOfTwoSimilarIDs(t *testing.T) {
	a, b := "a1b2c3d4e5f6a7b8c9d0", "a9b8c7d6e5f4a3b2c1d0"
	var r events.Redactor
	r.AddSessionID(a)
	r.AddSessionID(b)
	r.ForgetSessionID(a)
	require.Equal(t, "x "+a+" "+events.HashSessionID(b)+" y", r.Text("x "+a+" "+b+" y"))
	r.AddSessionID(a)
	r.ForgetSessionID(b)
	require.Equal(t, "x "+events.HashSessionID(a)+" "+b+" y", r.Text("x "+a+" "+b+" y"))
	r.ForgetSessionID(a)
	require.Equal(t, "x "+a+" "+b+" y", r.Text("x "+a+" "+b+" y"))
	require.Equal(t, 0, r.SessionIDs())
}

// An endpoint's path segment is taken for a key when it is long and reads
// as one (a digit, or letters of both cases): a hex key, a UUID, a base64
// key without digits. A long lower-case name, and short words, stay.
func TestEndpointPathSegmentsThatReadAsKeys(t *testing.T) {
	keys := []string{"3f9a0c7e5b1d2468", "550e8400-e29b-41d4-a716-446655440000", "QmFzZVNpeHR5Rm91cktleQ"}
	names := []string{"model-context-protocol-servers", "servers", "mcp", "v1"}
	var r events.Redactor
	r.AddEndpointSecrets("https://example.com/" + strings.Join(append(append([]string{}, names...), keys...), "/") + "/mcp")
	for _, k := range keys {
		require.NotContains(t, r.Text("GET /x/"+k+"/mcp failed"), k)
	}
	for _, n := range names {
		require.Contains(t, r.Text("GET /"+n+"/mcp failed"), "/"+n+"/")
	}
}

// A path segment's unescaped form is held to the segment's rule: a key of
// 16 bytes escaped ("%41%41%41%41%41%41") that is a 6-byte word unescaped
// would mask that word in every text, inside longer words too.
func TestEndpointPathSegmentUnescapedIsHeldToTheRule(t *testing.T) {
	var r events.Redactor
	r.AddEndpointSecrets("https://example.com/%41%41%41%41%41%41/mcp")
	require.Equal(t, "AAAAAA rated", r.Text("AAAAAA rated"))
	r.AddEndpointSecrets("https://example.com/%33f9a0c7e5b1d2468x/mcp")
	require.NotContains(t, r.Text("key 3f9a0c7e5b1d2468x"), "3f9a0c7e5b1d2468x")
}

// A secret registered by two owners stays masked until both forgot it: an
// endpoint's key that is also the OAuth handler's token is still masked
// once the token is renewed and forgotten.
func TestSecretRegisteredTwiceIsForgottenTwice(t *testing.T) {
	var r events.Redactor
	const s = "tok-0123456789abcdef"
	r.AddSecret(s)
	r.AddSecret(s)
	r.ForgetSecret(s)
	require.NotContains(t, r.Text("token "+s), s)
	r.ForgetSecret(s)
	require.Contains(t, r.Text("token "+s), s)
}

// A command line's credentials are registered wherever a stdio server's
// configuration writes them: after a flag named as a credential (camelCase
// too), in a flag's or an assignment's value, in a header (its scheme not
// part of the value), in a URL, also as a flag's value; the other
// arguments are not, nor a credential flag's value that does not read as a
// key (a word, a path, a variable's name).
func TestCommandLineSecrets(t *testing.T) {
	secret := func(i int) string { return fmt.Sprintf("cred%d-Zq8vN3xP0aLr7TmK", i) }
	args := []string{
		"-y", "@modelcontextprotocol/server-github", "/home/user/projects",
		"--api-key", secret(1),
		"--token=" + secret(2),
		"GITHUB_PERSONAL_ACCESS_TOKEN=" + secret(3),
		"--header", "Authorization: Bearer " + secret(4),
		"--header=X-Api-Key: " + secret(5),
		"https://upstream.example/mcp?k=" + secret(6),
		"-password", secret(7),
		"--accessToken", secret(8), // camelCase, by its last word
		"--header", "Authorization: token " + secret(9), // a scheme other than Bearer
		"--url=https://upstream.example/mcp?k=" + secret(10),
		"postgresql://app:" + secret(11) + "@localhost/db",
		// Values that do not read as keys: no ordinary word is masked.
		"--auth", "no",
		"--auth-method", "password",
		"--secret-name", "production",
		"--token-file", "/home/user/token.txt",
		"--api-key-env", "OPENAI_API_KEY",
		"--token-type", "access_token",
		"--verbose", "--port", "8080",
	}
	var r events.Redactor
	r.AddCommandLineSecrets(args)
	for i := 1; i <= 11; i++ {
		require.NotContains(t, r.Text("server said "+secret(i)), secret(i), "secret %d", i)
	}
	kept := "no password production /home/user/token.txt OPENAI_API_KEY access_token @modelcontextprotocol/server-github /home/user/projects --verbose 8080 Authorization"
	require.Equal(t, kept, r.Text(kept))
}

// A secret of several lines (a PEM key in a server's env) is masked line by
// line too: a process's stderr is logged a record a line, and a middle line
// of the key matches no form of the whole. Lines shorter than
// MinSessionIDLen stay (they would mask ordinary text); forgetting the
// secret forgets its lines.
func TestMultiLineSecretMasksEachLine(t *testing.T) {
	const pem = "-----BEGIN PRIVATE KEY-----\r\nMIDDLEsecretLINE5678abc\n  ZZZZlastLine9999  \n==\n-----END PRIVATE KEY-----"
	var r events.Redactor
	require.True(t, r.AddLikelySecret(pem))
	m := events.Masked
	for in, want := range map[string]string{
		"line=MIDDLEsecretLINE5678abc":      "line=" + m,
		`line="  ZZZZlastLine9999  "`:       `line="  ` + m + `  "`,
		"-----END PRIVATE KEY-----":         m,
		`{"k":"MIDDLEsecretLINE5678abc\n"}`: `{"k":"` + m + `\n"}`,
		"== stays":                          "== stays",
		"whole " + pem:                      "whole " + m,
		"ZZZZlastLine is not a whole line":  "ZZZZlastLine is not a whole line",
	} {
		require.Equal(t, want, r.Text(in), "in %q", in)
	}
	r.ForgetSecret(pem)
	require.Equal(t, "line=MIDDLEsecretLINE5678abc", r.Text("line=MIDDLEsecretLINE5678abc"))
}

// KeepSessionIDs leaves exactly the ids given registered: the others are
// forgotten (still hashed where a session id is named), the new ones added.
func TestKeepSessionIDs(t *testing.T) {
	a, b, c := "a1b2c3d4e5f6a7b8", "b1b2c3d4e5f6a7b8", "c1b2c3d4e5f6a7b8"
	var r events.Redactor
	r.AddSessionID(a)
	r.AddSessionID(b)
	r.KeepSessionIDs(b, c, "")
	require.Equal(t, 2, r.SessionIDs())
	require.Equal(t, a+" "+events.HashSessionID(b)+" "+events.HashSessionID(c), r.Text(a+" "+b+" "+c))
	r.KeepSessionIDs()
	require.Equal(t, 0, r.SessionIDs())
}

// A session id holds visible ASCII only (streamable-http.mdx, Session
// Management: 0x21 to 0x7E). A named id on a line with a control byte or
// DEL is a hostile one whose end a space cannot tell: it is hashed whole,
// to the line's end (in go-sdk's form, to its last ')'), and nothing of it
// is left in the text; on an ordinary line a space still ends it.
func TestHostileNamedIDIsHashedToTheLineEnd(t *testing.T) {
	var r events.Redactor
	h := events.HashSessionID
	for in, want := range map[string]string{
		"Mcp-Session-Id: ab cd\x01\x1b[31mef\x7f":                   "Mcp-Session-Id: " + h("ab cd\x01\x1b[31mef\x7f"),
		"Mcp-Session-Id: ab\x01\x1b[31mcd\x7f\r\nContent-Length: 9": "Mcp-Session-Id: " + h("ab\x01\x1b[31mcd\x7f") + "\r\nContent-Length: 9",
		"sessionid=a b\x02c;d":                                      "sessionid=" + h("a b\x02c;d"),
		"failed (session ID: bad id\x01x): gone":                    "failed (session ID: " + h("bad id\x01x") + "): gone",
		"Mcp-Session-Id: abc def":                                   "Mcp-Session-Id: " + h("abc") + " def",
		"session ID: abc\tgone":                                     "session ID: " + h("abc") + "\tgone",
	} {
		got := r.Text(in)
		require.Equal(t, want, got, "%q", in)
		require.Equal(t, got, r.Text(got), "idempotent: %q", in)
	}
}

// A credential's value and a session id are read by one reader wherever a
// name names them (after ':' or '=', spaced or not, in Go's map, quoted as
// JSON, inside a quoted message): the credential's ends masked, the id's
// hashed.
func TestNamedValuesAreReadAlike(t *testing.T) {
	var r events.Redactor
	for _, c := range []struct{ form, value, id string }{ // N the name, V the value as the text holds it
		{"N: V", "abc-123", "abc-123"},
		{"N=V&x=1", "abc-123", "abc-123"},
		{"N = V then", "abc-123", "abc-123"},
		{"map[N:[V] X:[y]]", "abc-123", "abc-123"},
		{`{"N": "V"}`, `a\"bc`, `a"bc`},
		{`"{\"N\":\"V\"}"`, "a bc", "a bc"},
		{`N="V"`, "a bc", "a bc"},
	} {
		text := func(name, value string) string { return strings.NewReplacer("N", name, "V", value).Replace(c.form) }
		require.Equal(t, text("Mcp-Session-Id", events.HashSessionID(c.id)), r.Text(text("Mcp-Session-Id", c.value)), c.form)
		require.Equal(t, text("X-Api-Key", events.Masked), r.Text(text("X-Api-Key", c.value)), c.form)
	}
	// Only the extent of a raw value differs: a credential's after '=' holds
	// what a session id's stops at.
	require.Equal(t, "password=[redacted] next", r.Text("password=p,a;s)s]€ next"))
	require.Equal(t, "sessionid="+events.HashSessionID("p")+",a;s next", r.Text("sessionid=p,a;s next"))
}
