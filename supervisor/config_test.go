package supervisor

import (
	"reflect"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/jonboulle/clockwork"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpsup/mcpsup/httpsession"
)

// TestConfigExposesNoWireType: no field of Config, at any depth, has a type
// of package wire, so a host configures a supervisor without importing it.
// Config.Resume is a state the supervisor wrote (Supervisor.ResumeState,
// ParseResumeState), not one a host builds: its embedded httpsession.ResumeState is
// not walked.
func TestConfigExposesNoWireType(t *testing.T) {
	wirePkg := reflect.TypeFor[httpsession.Config]().PkgPath()
	seen := map[reflect.Type]bool{}
	var walk func(path string, typ reflect.Type)
	walk = func(path string, typ reflect.Type) {
		if seen[typ] || typ == reflect.TypeFor[httpsession.ResumeState]() {
			return
		}
		seen[typ] = true
		assert.NotEqual(t, wirePkg, typ.PkgPath(), "%s is a wire type (%s)", path, typ)
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

// TestConfigWireMapping: the zero values map to the wire layer's defaults,
// and every field of StreamKeeper reaches httpsession.StreamConfig by name.
func TestConfigWireMapping(t *testing.T) {
	assert.Equal(t, httpsession.EraAuto, Era(0).toWire())
	assert.Equal(t, httpsession.Era2025, Era2025.toWire())
	assert.Equal(t, httpsession.Era20260728, Era20260728.toWire())
	assert.Equal(t, httpsession.HostilityRule{}, HostileRule{}.toWire(), "zero: the wire rule's default (3)")
	assert.Equal(t, httpsession.HostilityRule{Threshold: 5}, HostileRule{Threshold: 5}.toWire())
	assert.Equal(t, httpsession.StreamConfig{}, StreamKeeper{}.toWire(), "zero: the keeper's defaults")

	k := StreamKeeper{Span: time.Second, InitialBackoff: 2 * time.Second, MaxBackoff: 3 * time.Second, Jitter: 0.5, MaxEventBytes: 7}
	got := reflect.ValueOf(k.toWire())
	src := reflect.ValueOf(k)
	require.Equal(t, got.NumField(), src.NumField(), "StreamKeeper has every field of httpsession.StreamConfig")
	for i := range src.NumField() {
		name := src.Type().Field(i).Name
		assert.Equal(t, src.Field(i).Interface(), got.FieldByName(name).Interface(), name)
		assert.False(t, src.Field(i).IsZero(), "%s set in the test", name)
	}
}

// TestAnswerLimitsReachTheWire: every limit reaches its httpsession.Config field,
// and the zero value leaves the wire layer's defaults.
func TestAnswerLimitsReachTheWire(t *testing.T) {
	var zero httpsession.Config
	AnswerLimits{}.apply(&zero)
	assert.Equal(t, httpsession.Config{}, zero, "zero: the wire layer's defaults")
	var c httpsession.Config
	AnswerLimits{JSON: 1, ErrorBody: 2, SSEEvent: 3, JSONValues: 4, Messages: 5, ContentBlocks: 6, InputRequestObjects: 7}.apply(&c)
	assert.Equal(t, 1, c.MaxJSONBody)
	assert.Equal(t, 2, c.MaxErrorBody)
	assert.Equal(t, 3, c.MaxSSEEvent)
	assert.Equal(t, 4, c.MaxJSONValues)
	assert.Equal(t, 5, c.MaxMessages)
	assert.Equal(t, 6, c.MaxContentBlocks)
	assert.Equal(t, 7, c.MaxInputRequestObjects)
}

// The zero Backoff never stops (a day of retries at the 30s cap); a
// positive MaxAttempts or MaxElapsed does.
func TestBackoffUnboundedByDefault(t *testing.T) {
	clock := clockwork.NewFakeClock()
	cfg := Config{Endpoint: "http://127.0.0.1:1/mcp", Backoff: Backoff{NoJitter: true}}.withDefaults()
	require.Equal(t, DefaultChurnCooldown, cfg.ChurnCooldown)
	bo := cfg.Backoff.newBackOff(clock)
	bo.Reset()
	var last time.Duration
	for elapsed := time.Duration(0); elapsed < 24*time.Hour; elapsed += last {
		last = bo.NextBackOff()
		require.NotEqual(t, backoff.Stop, last, "stopped after %s", elapsed)
		require.LessOrEqual(t, last, 30*time.Second)
		clock.Advance(last)
	}
	require.Equal(t, 30*time.Second, last)

	bounded := Config{Endpoint: "x", Backoff: Backoff{NoJitter: true, MaxAttempts: 3}}.withDefaults()
	bo = bounded.Backoff.newBackOff(clock)
	bo.Reset()
	for range 3 {
		require.NotEqual(t, backoff.Stop, bo.NextBackOff())
	}
	require.Equal(t, backoff.Stop, bo.NextBackOff(), "MaxAttempts 3")

	timed := Config{Endpoint: "x", Backoff: Backoff{NoJitter: true, MaxElapsed: time.Minute}}.withDefaults()
	bo = timed.Backoff.newBackOff(clock)
	bo.Reset()
	clock.Advance(2 * time.Minute)
	require.Equal(t, backoff.Stop, bo.NextBackOff(), "MaxElapsed 1m")
}
