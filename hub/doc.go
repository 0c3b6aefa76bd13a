// Package hub shows many MCP servers to a host as one: a supervisor
// (package supervisor) per server name, one merged catalog of qualified
// names, calls routed by those names, health as a value, one events sink
// and resume states kept in a Store. It is configured from the mcpServers
// JSON Claude Desktop, VS Code and Cursor read, starts at most
// Config.MaxStarting servers at once, detaches as a whole on exit and
// resumes on the next run without `initialize`.
//
//	f, err := hub.LoadServers("mcp.json") // {"mcpServers": {"search": {"url": …, "headers": {…}}}}
//	if err != nil { … }
//	h := hub.New(hub.Config{Store: &hub.FileStore{Dir: stateDir}, Events: events.Slog(logger)})
//	defer h.Detach() // keeps every session resumable; h.Close() ends them
//	_ = h.AddServers(ctx, f)
//	if err := h.WaitReady(ctx, hub.Any); err != nil { … }
//	tools := h.MCPTools() // "search__find", "files__find", …
//	res, err := h.CallTool(ctx, &mcp.CallToolParams{Name: "search__find", Arguments: args})
//	var ce *supervisor.CallError
//	if errors.As(err, &ce) { … } // the verdict and delivery, as for one supervisor
//
// Names: an item's qualified name is Config.Naming(server, item)
// (`server__item`), always in its server's namespace Naming(server, "");
// an invalid or colliding one is shortened with a stable hash; see
// [Naming], [ValidName] and docs/decisions/0019-hub-names-and-catalogs.md.
// One server's catalog is bounded as a whole (Config.MaxCatalogItems,
// MaxCatalogBytes).
//
// Credentials: a server's headers (whose values may read ${NAME} from the
// environment), env values and OAuth handler (Config.Credentials) reach
// that server alone; no stdio server inherits a variable another's header
// names; the template's OAuthHandler is refused (ErrSharedCredential). This
// keeps credentials apart, not a hostile stdio server out of the host's
// own environment: see docs/decisions/0020-hub-credentials-and-input.md.
//
// Events: every supervisor's events reach Config.Events with Server set,
// followed by the hub's own (the Kind constants of this package). The
// servers' header and env values and the credentials their args carry are
// masked in every event, log and error of the hub (package events,
// Redactor), and are each supervisor's Secrets too.
//
// Resume states: with a Store, a server's state is loaded when it is added
// and saved when what resumes it changes (a session opened, a stream
// decision) and on Detach or Remove(KeepSession); deleted on Close and
// Remove(EndSession). Writes run off the supervisors' goroutines, the
// latest state per server only. A state that cannot be used starts that
// server fresh after a KindStoreFailed event; no other server is affected.
//
// Replicas: with a Store that is also a Leaser (package
// github.com/mcpsup/mcpsup/redisstore), a hub serves a server only while
// it holds the server's lease, and its writes are fenced; the others stand
// by. The rule and its bounds are LeaseConfig's (docs/DESIGN.md section 8).
//
// Cost: no goroutine per server but its supervisor's (with a Leaser, its
// lease loop); starting and saving run only while there is work. A change
// of one server's catalog costs in proportion to that server's items
// (docs/benchmarks.md, section 7).
package hub
