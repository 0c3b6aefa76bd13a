// Command conformance is an MCP conformance client built on the supervisor:
// the official suite (@modelcontextprotocol/conformance) runs it once per
// client scenario, with the scenario in MCP_CONFORMANCE_SCENARIO, its
// context (JSON) in MCP_CONFORMANCE_CONTEXT and the server's URL as the one
// argument. Each scenario does what go-sdk's own conformance client does
// (go-sdk conformance/everything-client), through a Supervisor: every
// request goes out on the supervisor's session, and the auth scenarios use
// go-sdk's authorization-code handler as Config.HTTP.OAuthHandler alone.
//
//	MCP_CONFORMANCE_SCENARIO=initialize go run ./examples/conformance http://127.0.0.1:3001/mcp
//
// .ci/run runs the suite against it with the baseline
// examples/conformance/baseline.yml (the scenarios expected to fail, and
// why).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/mcpsup/mcpsup/supervisor"
)

// scenario configures the supervisor for one scenario and runs it on the
// ready supervisor.
type scenario struct {
	setup func(cfg *supervisor.Config, sctx map[string]any) error
	run   func(ctx context.Context, sup *supervisor.Supervisor, sctx map[string]any) error
}

var scenarios = map[string]scenario{
	"initialize":               {},
	"request-metadata":         {},
	"json-schema-ref-no-deref": {},
	"tools_call":               {run: callTool("add_numbers", map[string]any{"a": 5, "b": 3})},
	"sse-retry":                {run: callTool("test_reconnection", map[string]any{})},
	"elicitation-sep1034-client-defaults": {
		setup: elicit(map[string]any{}),
		run:   callTool("test_client_elicitation_defaults", map[string]any{}),
	},
	"json-schema-2020-12-preservation": {run: schemaEcho},
	"sep-2322-client-request-state": {
		setup: elicit(map[string]any{"confirmed": true}),
		run: bestEffort("test_mrtr_echo_state", "test_mrtr_no_state", "test_mrtr_unrelated",
			"test_mrtr_no_result_type"),
	},
	"http-standard-headers":     {run: standardHeaders},
	"http-custom-headers":       {run: customHeaders},
	"http-invalid-tool-headers": {run: invalidToolHeaders},
}

// authScenarios are run with go-sdk's authorization-code handler.
var authScenarios = []string{
	"auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback",
	"auth/authorization-server-migration", "auth/basic-cimd", "auth/iss-normalized",
	"auth/iss-not-advertised", "auth/iss-supported", "auth/iss-supported-missing",
	"auth/iss-unexpected", "auth/iss-wrong-issuer", "auth/metadata-default",
	"auth/metadata-issuer-mismatch", "auth/metadata-var1", "auth/metadata-var2",
	"auth/metadata-var3", "auth/offline-access-not-supported", "auth/offline-access-scope",
	"auth/pre-registration", "auth/resource-mismatch", "auth/scope-from-scopes-supported",
	"auth/scope-from-www-authenticate", "auth/scope-omitted-when-undefined",
	"auth/scope-retry-limit", "auth/scope-step-up", "auth/token-endpoint-auth-basic",
	"auth/token-endpoint-auth-none", "auth/token-endpoint-auth-post",
}

func init() {
	for _, name := range authScenarios {
		scenarios[name] = scenario{setup: oauth, run: callTool("test-tool", map[string]any{})}
	}
}

// readyTimeout bounds the connection of one scenario.
const readyTimeout = 20 * time.Second

func main() {
	log.SetFlags(0)
	if len(os.Args) != 2 {
		log.Fatalf("usage: MCP_CONFORMANCE_SCENARIO=<name> %s <server-url>", os.Args[0])
	}
	name := os.Getenv("MCP_CONFORMANCE_SCENARIO")
	sc, ok := scenarios[name]
	if !ok {
		log.Fatalf("unknown scenario %q", name)
	}
	var sctx map[string]any
	if raw := os.Getenv("MCP_CONFORMANCE_CONTEXT"); raw != "" {
		if err := json.Unmarshal([]byte(raw), &sctx); err != nil {
			log.Fatalf("MCP_CONFORMANCE_CONTEXT: %v", err)
		}
	}
	if err := run(context.Background(), os.Args[1], sc, sctx); err != nil {
		log.Fatalf("scenario %q failed: %v", name, err)
	}
}

func run(ctx context.Context, endpoint string, sc scenario, sctx map[string]any) error {
	cfg := supervisor.Config{Endpoint: endpoint, Client: supervisor.ClientConfig{Implementation: &mcp.Implementation{Name: "mcpsup-conformance", Version: "0"}}}
	if sc.setup != nil {
		if err := sc.setup(&cfg, sctx); err != nil {
			return err
		}
	}
	sup, err := supervisor.New(cfg)
	if err != nil {
		return err
	}
	defer sup.Close()
	sup.Start()
	wait, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	if err := sup.WaitForState(wait, supervisor.Ready); err != nil {
		reason, v := sup.Failure()
		return fmt.Errorf("not ready: %w (reason %q, verdict %s)", err, reason, v)
	}
	if sc.run == nil {
		return nil
	}
	return sc.run(ctx, sup, sctx)
}

func callTool(name string, args map[string]any) func(context.Context, *supervisor.Supervisor, map[string]any) error {
	return func(ctx context.Context, sup *supervisor.Supervisor, _ map[string]any) error {
		_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		return err
	}
}

// bestEffort calls each tool and logs refusals: some are expected.
func bestEffort(names ...string) func(context.Context, *supervisor.Supervisor, map[string]any) error {
	return func(ctx context.Context, sup *supervisor.Supervisor, _ map[string]any) error {
		for _, n := range names {
			if _, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: n, Arguments: map[string]any{}}); err != nil {
				log.Printf("CallTool(%q): %v", n, err)
			}
		}
		return nil
	}
}

func elicit(content map[string]any) func(*supervisor.Config, map[string]any) error {
	return func(cfg *supervisor.Config, _ map[string]any) error {
		cfg.Client.ClientOptions.Capabilities = &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
		cfg.Client.ClientOptions.ElicitationHandler = func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		}
		return nil
	}
}

func schemaEcho(ctx context.Context, sup *supervisor.Supervisor, _ map[string]any) error {
	tool := sup.Catalog().Tool("json_schema_2020_12_tool")
	if tool == nil {
		return errors.New(`tool "json_schema_2020_12_tool" not found`)
	}
	_, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: "json_schema_echo", Arguments: map[string]any{"schema": tool.InputSchema}})
	return err
}

func standardHeaders(ctx context.Context, sup *supervisor.Supervisor, _ map[string]any) error {
	cat := sup.Catalog()
	if len(cat.Tools) > 0 {
		_, _ = sup.CallTool(ctx, &mcp.CallToolParams{Name: cat.Tools[0].Name, Arguments: map[string]any{}})
	}
	if len(cat.Resources) > 0 {
		_, _ = sup.ReadResource(ctx, &mcp.ReadResourceParams{URI: cat.Resources[0].URI})
	}
	if len(cat.Prompts) > 0 {
		_, _ = sup.GetPrompt(ctx, &mcp.GetPromptParams{Name: cat.Prompts[0].Name, Arguments: map[string]string{}})
	}
	return nil
}

func customHeaders(ctx context.Context, sup *supervisor.Supervisor, sctx map[string]any) error {
	calls, _ := sctx["toolCalls"].([]any)
	for _, item := range calls {
		obj, _ := item.(map[string]any)
		name, _ := obj["name"].(string)
		args, _ := obj["arguments"].(map[string]any)
		if args == nil {
			args = map[string]any{}
		}
		if _, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args}); err != nil {
			log.Printf("CallTool(%q): %v", name, err)
		}
	}
	return nil
}

func invalidToolHeaders(ctx context.Context, sup *supervisor.Supervisor, _ map[string]any) error {
	for _, tool := range sup.Catalog().Tools {
		if _, err := sup.CallTool(ctx, &mcp.CallToolParams{Name: tool.Name, Arguments: map[string]any{"region": "us-west1"}}); err != nil {
			log.Printf("call %q rejected: %v", tool.Name, err)
		}
	}
	return nil
}

// oauth gives the supervisor go-sdk's authorization-code handler, set up
// as go-sdk's conformance client sets it up: the suite's authorization
// server redirects at once, so the code is read from the redirect.
func oauth(cfg *supervisor.Config, sctx map[string]any) error {
	ac := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:              "http://localhost:3000/callback",
		AuthorizationCodeFetcher: fetchCode,
		ClientIDMetadataDocumentConfig: &auth.ClientIDMetadataDocumentConfig{
			URL: "https://conformance-test.local/client-metadata.json",
		},
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{
			Metadata: &oauthex.ClientRegistrationMetadata{RedirectURIs: []string{"http://localhost:3000/callback"}},
		},
	}
	id, _ := sctx["client_id"].(string)
	secret, _ := sctx["client_secret"].(string)
	if id != "" && secret != "" {
		ac.PreregisteredClient = &oauthex.ClientCredentials{ClientID: id, ClientSecretAuth: &oauthex.ClientSecretAuth{ClientSecret: secret}}
	}
	h, err := auth.NewAuthorizationCodeHandler(ac)
	if err != nil {
		return err
	}
	cfg.HTTP.OAuthHandler = h
	return nil
}

func fetchCode(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args.URL, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		return nil, fmt.Errorf("authorization redirect: %w", err)
	}
	q := loc.Query()
	return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
}
