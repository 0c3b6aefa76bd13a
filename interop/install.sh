#!/usr/bin/env bash
# Installs the TypeScript reference MCP server used by the interop tests, and
# the TypeScript SDK whose client the gateway's tests (cmd/mcpsup) run, into
# <module root>/.interop (ignored by git). Idempotent: does nothing when that
# version is already installed. Without node/npm it says so loudly and exits 0,
# or 1 when CI is set (CI must run the interop tests).
set -euo pipefail
cd "$(dirname "$0")/.."

pkg=@modelcontextprotocol/server-everything
version=2026.8.31
sdk=@modelcontextprotocol/sdk
sdkversion=1.32.2 # the version server-everything depends on: one copy
prefix=.interop
manifest="$prefix/node_modules/$pkg/package.json"
sdkmanifest="$prefix/node_modules/$sdk/package.json"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "!!! interop: node and npm are required to install $pkg@$version." >&2
	if [ -n "${CI:-}" ]; then
		echo "!!! interop: CI is set, so this is an error: the interop tests must run." >&2
		exit 1
	fi
	echo "!!! interop: the interop tests will be SKIPPED on this machine." >&2
	exit 0
fi

if [ -f "$manifest" ] && [ -f "$sdkmanifest" ] &&
	[ "$(node -p 'require(process.argv[1]).version' "$PWD/$manifest")" = "$version" ] &&
	[ "$(node -p 'require(process.argv[1]).version' "$PWD/$sdkmanifest")" = "$sdkversion" ]; then
	echo "interop: $pkg@$version and $sdk@$sdkversion already installed in $prefix"
	exit 0
fi

echo "interop: installing $pkg@$version and $sdk@$sdkversion into $prefix"
mkdir -p "$prefix"
npm install --no-audit --no-fund --save-exact --prefix "$prefix" "$pkg@$version" "$sdk@$sdkversion"
