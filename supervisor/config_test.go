package supervisor

import (
	"reflect"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
	"github.com/mcpsup/mcpsup/stdio"
)

// TestConfigExposesNoWireType: a field of Config, at any depth, has a type
// of package httpsession only where this package names that type too (the
// transport options: StreamPolicy, HostileRule, StreamKeeper, AnswerLimits,
// Era), so a host configures a supervisor without importing it.
// Config.Resume is a state the supervisor wrote (Supervisor.ResumeState,
// ParseResumeState), not one a host builds: its embedded httpsession.ResumeState is
// not walked.
func TestConfigExposesNoWireType(t *testing.T) {
	wirePkg := reflect.TypeFor[httpsession.Config]().PkgPath()
	named := map[reflect.Type]bool{
		reflect.TypeFor[StreamPolicy](): true, reflect.TypeFor[HostileRule](): true,
		reflect.TypeFor[StreamKeeper](): true, reflect.TypeFor[AnswerLimits](): true, reflect.TypeFor[Era](): true,
	}
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] || typ == reflect.TypeFor[httpsession.ResumeState]() {
			return
		}
		seen[typ] = true
		if typ.PkgPath() == wirePkg {
			assert.True(t, named[typ], "%s is a transport type this package does not name (%s)", path, typ)
			return
		}
		switch typ.Kind() {
		case reflect.Pointer, reflect.Slice, reflect.Array, reflect.Map:
			walk(path, typ.Elem())
		case reflect.Struct:
			if typ.PkgPath() != reflect.TypeFor[Config]().PkgPath() {
				return // another package's own type (go-sdk, slog, net/http)
			}
			for i := range typ.NumField() {
				f := typ.Field(i)
				if f.IsExported() {
					walk(path+"."+f.Name, f.Type)
				}
			}
		}
	}
	walk("Config", reflect.TypeFor[Config]())
}

// The zero Backoff never stops (a day of retries at the 30s cap); a
// positive MaxAttempts or MaxElapsed does.
func TestBackoffUnboundedByDefault(t *testing.T) {
	clock := clockwork.NewFakeClock()
	cfg := Config{Endpoint: "http://127.0.0.1:1/mcp", Recovery: RecoveryConfig{Backoff: Backoff{NoJitter: true}}}.withDefaults()
	require.Equal(t, DefaultChurnCooldown, cfg.Recovery.ChurnCooldown)
	bo := cfg.Recovery.Backoff.newBackOff(clock)
	bo.Reset()
	var last time.Duration
	for elapsed := time.Duration(0); elapsed < 24*time.Hour; elapsed += last {
		last = bo.NextBackOff()
		require.NotEqual(t, backoff.Stop, last, "stopped after %s", elapsed)
		require.LessOrEqual(t, last, 30*time.Second)
		clock.Advance(last)
	}
	require.Equal(t, 30*time.Second, last)

	bounded := Config{Endpoint: "x", Recovery: RecoveryConfig{Backoff: Backoff{NoJitter: true, MaxAttempts: 3}}}.withDefaults()
	bo = bounded.Recovery.Backoff.newBackOff(clock)
	bo.Reset()
	for range 3 {
		require.NotEqual(t, backoff.Stop, bo.NextBackOff())
	}
	require.Equal(t, backoff.Stop, bo.NextBackOff(), "MaxAttempts 3")

	timed := Config{Endpoint: "x", Recovery: RecoveryConfig{Backoff: Backoff{NoJitter: true, MaxElapsed: time.Minute}}}.withDefaults()
	bo = timed.Recovery.Backoff.newBackOff(clock)
	bo.Reset()
	clock.Advance(2 * time.Minute)
	require.Equal(t, backoff.Stop, bo.NextBackOff(), "MaxElapsed 1m")
}

// TestZeroConfigTakesTheDocumentedDefaults pins the default each field's
// comment documents, group by group: the zero value of every field is its
// default (Config's doc).
func TestZeroConfigTakesTheDocumentedDefaults(t *testing.T) {
	c := Config{Endpoint: "http://127.0.0.1:1/mcp"}.withDefaults()
	assert.Equal(t, c.Endpoint, c.Name, "Name: Endpoint")
	assert.Equal(t, EraAuto, c.Era)

	assert.Equal(t, &mcp.Implementation{Name: "mcpsup", Version: "0"}, c.Client.Implementation)
	assert.NotNil(t, c.HTTP.HTTPClient)
	assert.Nil(t, c.HTTP.OAuthHandler)
	assert.Zero(t, c.HTTP.EraReprobe, "httpsession's DefaultEraReprobe applies")

	assert.Equal(t, StreamAuto, c.Stream.Policy)
	assert.Zero(t, c.Stream.HostileMemory, "httpsession's 24h applies")

	r := c.Recovery
	assert.Equal(t, Backoff{InitialInterval: 500 * time.Millisecond, MaxInterval: 30 * time.Second, Multiplier: 2, RandomizationFactor: 0.5}, r.Backoff)
	assert.Zero(t, r.KeepAlive, "off")
	assert.Equal(t, 10*time.Second, r.ProbeTimeout)
	assert.Equal(t, 30*time.Second, r.DiscoveryTimeout)
	assert.Equal(t, 5*time.Minute, r.ChurnCooldown)
	assert.Equal(t, ResendNever, r.Resend)

	l := c.Limits
	assert.Equal(t, 30*time.Second, l.MaxCallWait)
	assert.Equal(t, 5*time.Minute, l.CallTimeout)
	assert.Equal(t, time.Hour, l.CallTimeoutCeiling)
	assert.Equal(t, httpsession.DefaultMaxResponsesInFlight, l.MaxResponsesInFlight)
	assert.Equal(t, 16, l.MaxResponsesInFlight)
	assert.Equal(t, time.Second, l.RelistMinGap)
	assert.Equal(t, time.Minute, l.CatalogPollInterval)
	assert.Equal(t, 10*time.Second, l.MinListTTL)

	assert.NotNil(t, c.Observe.Clock)
	assert.NotNil(t, c.Observe.Logger)
	assert.Nil(t, c.Observe.Events, "discarded")

	cmd := Config{Command: &stdio.Command{Path: "/bin/server"}}.withDefaults()
	assert.Equal(t, "/bin/server", cmd.Name, "Name: Command.Path")
}
