// Package hub shows many MCP servers to a host as one: a set of supervisors
// (package supervisor) by server name, with one merged catalog of qualified
// names, calls routed by those names, health as a value, one events sink and
// resume states kept in a Store. It is the layer every host that connects to
// several servers writes by hand: configured from the mcpServers JSON
// Claude Desktop, VS Code and Cursor read, started with bounded concurrency,
// detached as a whole on exit and resumed on the next run without
// `initialize`.
//
// # Use
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
// # Names
//
// An item's qualified name is Config.Naming(server, item), `server__item` by
// default, the item's name read with the secrets the hub knows masked (the
// servers' header and env values, their URLs' credentials: see Events), so
// that a secret a server puts in an item's name reaches neither the name a
// model sees nor an event. A name that does not match `^[a-zA-Z0-9_-]{1,64}$` (the tool name
// rule of OpenAI's and Anthropic's APIs) keeps its valid bytes (others become
// '_'), cut to 53 bytes, plus '_' and a 10-digit hex hash of the server and
// item names: stable across runs and valid. Every name of a server begins
// with its namespace, Naming(server, "") ("search__"), so no server is
// routed another's name: a server whose namespace begins another's, or is
// begun by it ("gh" and "gh__ent"), is refused at Add (ErrServerName).
// When two items of a server ask for one name, the lower item id keeps it
// and the other gets the hashed form, whatever order they came in; each
// such collision is a KindNameCollision event (at most 16 for one change
// of a server's catalog, then one counting the rest). Tools and prompts are named
// after their names, resources after theirs (their URI when unnamed) and
// routed by URI. A server's catalog is bounded as a whole
// (Config.MaxCatalogItems, MaxCatalogBytes): one over is not merged
// (KindCatalogRefused).
//
// # Credentials
//
// A credential goes to the server it is for, never to the others: a
// server's headers are sent to it alone (their values may read ${NAME}
// from the environment, and such a variable is the server's too: no stdio
// server's process inherits it, unless its own env sets it),
// Config.Credentials gives each server its own OAuth handler, and the
// template's OAuthHandler, which would reach every server, is refused
// (ErrSharedCredential).
//
// Withholding a variable keeps a stdio server from being handed another's
// credential; it does not fence off a hostile one. A stdio server runs as
// the host's user and can read what the host can, the host's own
// environment included (/proc/<pid>/environ on Linux). A host that runs
// servers it does not trust keeps credentials out of its environment
// (Config.LookupEnv may read them from a secret store or file instead of
// os.LookupEnv) or runs those servers under another user or a sandbox.
//
// # Events
//
// Every supervisor's events reach Config.Events with Server set to the
// server's name, followed by the hub's own (KindMergedCatalogChanged with the
// diff, KindNameCollision, KindStoreFailed, KindConfigWarning,
// KindServerAdded, KindServerRemoved). The servers' header and env values
// of at least events.MinSessionIDLen bytes, and the credentials their args
// carry (events.Redactor.AddCommandLineSecrets), are registered as secrets of
// the hub's events.Redactor (events.Redactor.AddLikelySecret): masked in every event,
// in the supervisors' logs and in the hub's errors. The header values are
// also each supervisor's secrets (supervisor.Config.Secrets, as env
// values are its Command.Env's): the *supervisor.CallError reached through errors.As
// and Health's verdict are masked where the supervisor makes them.
//
// # Resume states
//
// With a Store, each server's resume state is loaded when it is added and
// saved whenever what resumes it changes (a session opened, a stream
// decision) and on Detach or Remove(KeepSession); it is deleted on Close and
// Remove(EndSession). Writes run on one goroutine of the hub, the latest
// state per server only. A state that cannot be loaded (corrupt, foreign,
// refused by the supervisor) starts that server fresh after a
// KindStoreFailed event; no other server is affected.
//
// # Replicas
//
// Replicas of a host (a gateway behind a load balancer, an agent runtime
// on several machines) share one Store that is also a Leaser (package
// github.com/mcpsup/mcpsup/redisstore, its own module, keeps states and
// leases in Redis). Each hub then serves a server only while it holds the
// server's lease: it acquires it before starting the supervisor, loads the
// state the last holder saved and resumes that session (no `initialize`
// when the server still has it), renews every TTL/3, and detaches (no
// DELETE) before the lease could end at the leaser when no renewal was
// accepted in time; its saves are fenced, so a replica that was paused past
// its lease never writes over the new holder's state. The others wait
// standby (Health.Lease, supervisor state Idle, no items in the merged
// catalog) and try again when the holder's lease would end. The rule and
// its bounds are LeaseConfig's; KindLeaseAcquired and KindLeaseLost report
// it.
//
// # Cost
//
// A hub adds no goroutine per server (with a Leaser, one per server: its
// lease loop, mostly waiting on a timer): a server's goroutines are its
// supervisor's. Starting uses at most Config.MaxStarting goroutines, saving
// one, both only while there is work. A change of one server's catalog
// updates the merged view in proportion to that server's items, marshaled
// and named before the routing lock, which the swap alone holds; the sorted
// list a host reads next is the last one merged with the changed names, no
// sort of the whole (docs/benchmarks.md, section 7).
package hub
