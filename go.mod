module github.com/mcpsup/mcpsup

go 1.26.0

require (
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/google/jsonschema-go v0.4.3
	github.com/jonboulle/clockwork v0.5.0
	github.com/modelcontextprotocol/go-sdk v1.8.0
	github.com/qmuntal/stateless v1.7.2
	github.com/segmentio/encoding v0.5.4
	github.com/stretchr/testify v1.12.1
	go.opentelemetry.io/otel v1.47.0
	go.opentelemetry.io/otel/exporters/stdout/stdoutmetric v1.47.0
	go.opentelemetry.io/otel/exporters/stdout/stdouttrace v1.47.0
	go.opentelemetry.io/otel/metric v1.47.0
	go.opentelemetry.io/otel/sdk v1.47.0
	go.opentelemetry.io/otel/sdk/metric v1.47.0
	go.opentelemetry.io/otel/trace v1.47.0
	go.uber.org/goleak v1.3.0
	golang.org/x/oauth2 v0.35.0
	golang.org/x/sync v0.20.0
	golang.org/x/sys v0.48.0
	golang.org/x/time v0.15.0
	pgregory.net/rapid v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/segmentio/asm v1.1.3 // indirect
	github.com/yosida95/uritemplate/v3 v3.0.2 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/log v1.47.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
)
