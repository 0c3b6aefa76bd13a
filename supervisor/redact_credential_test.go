package supervisor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An access token that is also a secret of the configuration (the
// endpoint's query key here) stays masked once renewed tokens push it out
// of the credentials kept, and a short token, never registered, unregisters
// nothing when it is pushed out.
func TestForgottenCredentialKeepsTheConfigurationsSecret(t *testing.T) {
	const key = "k3y-0123456789abcdef"
	var r redactor
	r.AddEndpointSecrets("https://example.com/mcp?api=" + key + "&v=ab1")
	r.addCredential(key)
	r.addCredential("token-two-0123456789")
	r.addCredential("token-three-0123456789") // pushes key out
	require.NotContains(t, r.Text("error: "+key), key, "the endpoint's key")
	r.addCredential("token-four-0123456789") // pushes token-two out
	require.Contains(t, r.Text("error: token-two-0123456789"), "token-two-0123456789", "a token that was the handler's alone")

	r.AddSecret("ab12")
	r.addCredential("ab12")
	r.addCredential("token-five-0123456789")
	r.addCredential("token-six-0123456789")
	require.NotContains(t, r.Text("x ab12 y"), "ab12", "a short token was never registered by addCredential")
}
