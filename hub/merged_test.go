package hub

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/mcpsup/mcpsup/events"
)

func newTools() *merged[mcp.Tool] {
	return New(Config{}).tools
}

func tools(names ...string) []*mcp.Tool {
	out := make([]*mcp.Tool, len(names))
	for i, n := range names {
		out[i] = &mcp.Tool{Name: n}
	}
	return out
}

func view(m *merged[mcp.Tool]) map[string]string {
	out := map[string]string{}
	for _, it := range m.items() {
		out[it.Name] = it.Server + "/" + it.ID
	}
	return out
}

func TestQualifiedNames(t *testing.T) {
	require.Equal(t, "search__find", qualify(DefaultNaming, "search", "find"))
	require.Equal(t, "search.find", Separated(".")("search", "find"))
	q := qualify(Separated("."), "search", "find")
	require.Regexp(t, `^search_find_[0-9a-f]{10}$`, q, "a dot is not valid for model APIs")
	require.Equal(t, q, qualify(Separated("."), "search", "find"), "stable")
	long := qualify(DefaultNaming, strings.Repeat("s", 40), strings.Repeat("t", 40))
	require.Len(t, long, MaxNameLen)
	require.True(t, ValidName(long))
	require.NotEqual(t, long, qualify(DefaultNaming, strings.Repeat("s", 40), strings.Repeat("t", 41)), "the hash tells cut names apart")
	require.True(t, ValidName(qualify(DefaultNaming, "", "")))
	require.False(t, ValidName(""))
	require.False(t, ValidName("ä"))
}

func TestMergedDiffAndCollision(t *testing.T) {
	m := newTools()
	d, cols := m.update("x__y", tools("z"))
	require.Equal(t, []string{"x__y__z"}, d.Added)
	require.Empty(t, cols)

	// x's y__z asks for the same name and wins it (x < x__y).
	d, cols = m.update("x", tools("y__z", "w"))
	alt := candidate("x__y__z", claimant{"x__y", "z"}, 0)
	require.Equal(t, []string{"x__w", alt}, d.Added)
	require.Equal(t, []string{"x__y__z"}, d.Changed, "the name now routes to another server")
	require.Len(t, cols, 1)
	require.Equal(t, Collision{Name: "x__y__z", Winner: "x", WinnerID: "y__z", Loser: "x__y", LoserID: "z", Renamed: alt}, cols[0])
	require.Equal(t, map[string]string{"x__y__z": "x/y__z", alt: "x__y/z", "x__w": "x/w"}, view(m))

	// x leaves: x__y gets the name back.
	d, _ = m.update("x", nil)
	require.Equal(t, []string{"x__w", alt}, d.Removed)
	require.Equal(t, []string{"x__y__z"}, d.Changed)
	require.Equal(t, map[string]string{"x__y__z": "x__y/z"}, view(m))

	// A changed definition is a change; the same one is none.
	d, _ = m.update("x__y", []*mcp.Tool{{Name: "z", Description: "new"}})
	require.Equal(t, []string{"x__y__z"}, d.Changed)
	d, _ = m.update("x__y", []*mcp.Tool{{Name: "z", Description: "new"}})
	require.True(t, d.Empty())
}

// Whatever order servers arrive, change and leave in, the view is a
// function of the items present.
func TestMergedViewIsOrderIndependent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		servers := []string{"a", "a__b", "b", "c"}
		// The last asks for the name a__b's c gets when a's b__c wins.
		items := []string{"b__c", "c", "x", "b", "a", strings.TrimPrefix(candidate("a__b__c", claimant{"a__b", "c"}, 0), "a__")}
		final := map[string][]string{}
		type step struct {
			server string
			tools  []string
		}
		var steps []step
		for range rapid.IntRange(1, 12).Draw(t, "steps") {
			s := rapid.SampledFrom(servers).Draw(t, "server")
			ts := rapid.SliceOfDistinct(rapid.SampledFrom(items), rapid.ID[string]).Draw(t, "tools")
			steps = append(steps, step{s, ts})
			final[s] = ts
		}
		m := newTools()
		for _, st := range steps {
			m.update(st.server, tools(st.tools...))
		}
		fresh := newTools()
		order := slices.Sorted(func(yield func(string) bool) {
			for s := range final {
				if !yield(s) {
					return
				}
			}
		})
		slices.Reverse(order)
		for _, s := range order {
			fresh.update(s, tools(final[s]...))
		}
		require.Equal(t, view(fresh), view(m))
		n := 0
		for _, ts := range final {
			n += len(ts)
		}
		require.Len(t, m.items(), n, "every item has a name")
	})
}

// TestItemNamedLikeARenamedOneTakesNoOthersName: a server may name an item
// after the name another server's item got in a collision (the short hash
// is public): the base name it asks for is its own, and the renamed item
// moves to another name, in whatever order the items came; nothing routes
// to the wrong server and every item keeps a name.
func TestItemNamedLikeARenamedOneTakesNoOthersName(t *testing.T) {
	alt := candidate("x__y__z", claimant{"x__y", "z"}, 0)
	hijack := strings.TrimPrefix(alt, "x__") // x's item asks for alt as its base name
	check := func(t *testing.T, m *merged[mcp.Tool]) {
		t.Helper()
		v := view(m)
		require.Len(t, v, 3, "every item has a name: %v", v)
		require.Equal(t, "x/"+hijack, v[alt], "the base name is the item's own")
		require.Equal(t, "x/y__z", v["x__y__z"])
		var renamed []string
		for name, item := range v {
			if item == "x__y/z" {
				renamed = append(renamed, name)
			}
			cl, ok := m.owner[name]
			require.True(t, ok)
			require.Equal(t, item, cl.server+"/"+cl.id, "%s routes to its item", name)
		}
		require.Len(t, renamed, 1, "x__y's z has a name of its own: %v", v)
	}
	orders := map[string][]struct {
		server string
		tools  []string
	}{
		"renamed first": {{"x__y", []string{"z"}}, {"x", []string{"y__z"}}, {"x", []string{"y__z", hijack}}},
		"hijack first":  {{"x", []string{hijack}}, {"x__y", []string{"z"}}, {"x", []string{hijack, "y__z"}}},
		"together":      {{"x", []string{"y__z", hijack}}, {"x__y", []string{"z"}}},
	}
	for name, steps := range orders {
		t.Run(name, func(t *testing.T) {
			m := newTools()
			for _, st := range steps {
				m.update(st.server, tools(st.tools...))
			}
			check(t, m)
			// The item asking for the name leaves: the renamed item takes
			// its first alternate again, as if it had never been asked for.
			d, _ := m.update("x", tools("y__z"))
			require.Equal(t, map[string]string{"x__y__z": "x/y__z", alt: "x__y/z"}, view(m), "diff %+v", d)
		})
	}
}

func TestHeaderValuesAreMasked(t *testing.T) {
	rec := &events.Recorder{}
	h := New(Config{Events: rec})
	t.Cleanup(func() { _ = h.Close() })
	require.NoError(t, h.Add(t.Context(), ServerConfig{Name: "s", URL: "http://127.0.0.1:1/mcp", Headers: map[string]string{"X-Api-Key": "k3y-s3cr3t-value"}}))
	h.emit(events.Event{Kind: KindStoreFailed, Server: "s", Detail: "sent k3y-s3cr3t-value"})
	ce := &CallError{Op: "tools/call", Name: "s__t", Server: "s", ID: "t", Err: fmt.Errorf("echo k3y-s3cr3t-value"), redact: &h.redact}
	require.NotContains(t, ce.Error(), "k3y-s3cr3t-value")
	for _, ev := range rec.Events() {
		b, err := ev.MarshalJSON()
		require.NoError(t, err)
		require.NotContains(t, string(b), "k3y-s3cr3t-value")
	}
	require.NotZero(t, rec.Len())
}

// TestShortHeaderAndEnvValuesMaskNoWords: a header or env value is
// registered as a secret when it is long enough to be one, as the
// supervisor registers the endpoint's; registered whatever its length, "X-Client-Version: 2" or "DEBUG=1" masked
// every 2 or 1 in every event and error of the hub, and the names of a
// merged-catalog-changed event named no tool any more.
func TestShortHeaderAndEnvValuesMaskNoWords(t *testing.T) {
	rec := &events.Recorder{}
	h := New(Config{Events: rec})
	t.Cleanup(func() { _ = h.Close() })
	require.NoError(t, h.Add(t.Context(), ServerConfig{Name: "s", URL: "http://127.0.0.1:1/mcp",
		Headers: map[string]string{"X-Client-Version": "2", "X-Api-Key": "k3y-s3cr3t", "X-Tenant": "tenant-0123456789"}}))
	require.NoError(t, h.Add(t.Context(), ServerConfig{Name: "p", Command: "/bin/true",
		Env: map[string]string{"DEBUG": "1", "READ_ONLY": "true", "GITHUB_TOKEN": "ghp_0123456789"}}))
	h.emit(events.Event{Kind: KindMergedCatalogChanged, Server: "s", Op: "tools", Added: []string{"s__tool-1", "s__tool-2"},
		Detail: "2 tools: +s__tool-1 +s__tool-2; true; sent k3y-s3cr3t, ghp_0123456789 and tenant-0123456789"})
	var ev events.Event
	for _, e := range rec.Events() {
		if e.Kind == KindMergedCatalogChanged {
			ev = e
		}
	}
	require.Equal(t, []string{"s__tool-1", "s__tool-2"}, ev.Added)
	require.Equal(t, "2 tools: +s__tool-1 +s__tool-2; true; sent [redacted], [redacted] and [redacted]", ev.Detail)
	ce := &CallError{Op: "tools/call", Name: "s__tool-2", Server: "s", ID: "tool-2", Err: fmt.Errorf("HTTP 429"), redact: &h.redact}
	require.Equal(t, `hub: tools/call "s__tool-2" (tool "tool-2" of server "s"): HTTP 429`, ce.Error())
}

func TestHeadersReachTheServer(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Get("Authorization")
	}))
	defer srv.Close()
	c := serverClient(nil, map[string]string{"authorization": "Bearer t"}, nil)
	resp, err := c.Get(srv.URL)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, "Bearer t", <-got)
	c.CloseIdleConnections()
}

// TestQualifiedNamesStayInTheirServersNamespace: for any server names
// (those the hub accepts: see Naming) and any items they list, including
// items named after another server's prefix ("gh" listing "ent__record"
// beside a server "gh__ent"), every qualified name routes to an item of
// the one server whose namespace it is in, and every item has a name.
func TestQualifiedNamesStayInTheirServersNamespace(t *testing.T) {
	namings := map[string]Naming{
		"default": DefaultNaming,
		"dash":    Separated("-"),
		"none":    Separated(""),
		"suffix":  func(server, item string) string { return item + "@" + server }, // not server-first
	}
	rapid.Check(t, func(t *rapid.T) {
		key := rapid.SampledFrom(slices.Sorted(maps.Keys(namings))).Draw(t, "naming")
		naming := namings[key]
		piece := rapid.SampledFrom([]string{"a", "b", "_", "__", "-", ".", "gh", "gh__ent"})
		word := rapid.Custom(func(t *rapid.T) string {
			return strings.Join(rapid.SliceOfN(piece, 1, 4).Draw(t, "pieces"), "")
		})
		var servers []string
		var taken takenNames
		for _, s := range rapid.SliceOfNDistinct(word, 1, 5, rapid.ID[string]).Draw(t, "servers") {
			if ns, err := namespace(naming, s); err == nil && taken.take(s, ns) == nil {
				servers = append(servers, s)
			}
		}
		h := New(Config{Naming: naming})
		m := h.tools
		want := 0
		for _, s := range servers {
			var items []string
			for _, it := range rapid.SliceOfDistinct(word, rapid.ID[string]).Draw(t, "items of "+s) {
				// An item may be named after any server's prefix.
				items = append(items, it, naming(rapid.SampledFrom(servers).Draw(t, "other"), it))
			}
			items = slices.Compact(slices.Sorted(slices.Values(items)))
			want += len(items)
			m.update(s, tools(items...))
		}
		require.Len(t, m.items(), want, "every item has a name")
		for _, it := range m.items() {
			cl, ok := m.owner[it.Name]
			require.True(t, ok)
			require.Equal(t, it.Server, cl.server)
			for _, s := range servers {
				p, err := namespace(naming, s)
				require.NoError(t, err)
				require.Equal(t, s == it.Server, strings.HasPrefix(it.Name, p),
					"%q (item %q of %q) against the namespace %q of %q", it.Name, it.ID, it.Server, p, s)
			}
		}
	})
}

// TestTakenNamesAgreeWithComparingEveryPair: takenNames, which finds an
// overlapping namespace by map and binary search, refuses a server exactly
// when comparing its namespace with every other's finds one beginning the
// other (or its name is taken), through any order of takes and frees.
func TestTakenNamesAgreeWithComparingEveryPair(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		piece := rapid.SampledFrom([]string{"a", "b", "_", "__", "gh", "gh__ent"})
		word := rapid.Custom(func(t *rapid.T) string {
			return strings.Join(rapid.SliceOfN(piece, 1, 3).Draw(t, "pieces"), "")
		})
		var taken takenNames
		held := map[string]string{} // server -> namespace, compared pair by pair
		for range rapid.IntRange(1, 40).Draw(t, "steps") {
			s := word.Draw(t, "server")
			if _, ok := held[s]; ok && rapid.Bool().Draw(t, "free") {
				taken.free(s)
				delete(held, s)
				continue
			}
			ns := DefaultNaming(s, "")
			var want error
			if _, ok := held[s]; ok {
				want = ErrDuplicate
			}
			for _, ons := range held {
				if want == nil && (strings.HasPrefix(ns, ons) || strings.HasPrefix(ons, ns)) {
					want = ErrServerName
				}
			}
			err := taken.take(s, ns)
			if want == nil {
				require.NoError(t, err, "%q among %v", ns, held)
				held[s] = ns
			} else {
				require.ErrorIs(t, err, want, "%q among %v", ns, held)
			}
			require.Len(t, taken.sorted, len(held))
			require.True(t, slices.IsSorted(taken.sorted))
		}
	})
}

// update is prepare and apply, its diff sorted.
func (m *merged[T]) update(server string, items []*T) (events.ListChange, []Collision) {
	d, cols := m.apply(server, m.prepare(server, items))
	return d, cols
}
