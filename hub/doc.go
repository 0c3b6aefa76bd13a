// Package hub shows many MCP servers to a host as one: a supervisor
// (package supervisor) per server name, one merged catalog of qualified
// names, calls routed by those names, health as a value, one events sink
// and resume states kept in a Store. It reads the mcpServers JSON of Claude
// Desktop, VS Code and Cursor, starts at most Config.MaxStarting servers at
// once, detaches as a whole on exit and resumes on the next run without
// `initialize`.
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
// Names and catalogs: [Naming], [Collision], Config.MaxCatalogItems;
// docs/decisions/0019-hub-names-and-catalogs.md. Credentials: a server's
// headers, env values and OAuth handler reach that server alone and are
// masked in every event, log and error of the hub ([ServerConfig.Headers],
// ErrSharedCredential; docs/decisions/0020-hub-credentials-and-input.md).
// Resume states: [Store], [Hub.Remove], [Hub.Detach]. Replicas: with a
// Store that is also a [Leaser] (package redisstore), a hub serves a server
// only while it holds its lease ([LeaseConfig]; docs/DESIGN.md section 8).
package hub
