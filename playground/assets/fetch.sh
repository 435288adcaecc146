#!/bin/sh
# fetch.sh rebuilds playground/assets/vendor/ from the npm registry: the UMD
# builds of GraphiQL and React, pinned below. The output is committed, so the
# server never loads anything from a CDN; run this only to change a version:
#
#   sh playground/assets/fetch.sh
#
# It needs npm, tar and sha256sum (or shasum, on macOS). npm checks each
# tarball against the registry's integrity hash. To upgrade, change a version
# below, run the script, and review the diff of vendor/VERSIONS.
set -eu

GRAPHIQL=3.8.3
REACT=18.3.1

here=$(cd "$(dirname "$0")" && pwd)
out="$here/vendor"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

sha256() {
	if command -v sha256sum >/dev/null; then sha256sum "$1"; else shasum -a 256 "$1"; fi | cut -d' ' -f1
}

# take PACKAGE VERSION FILE... unpacks PACKAGE@VERSION and copies each FILE
# (a path inside the package) to vendor/, flat.
take() {
	pkg=$1 ver=$2
	shift 2
	tgz=$(cd "$tmp" && npm pack --silent "$pkg@$ver")
	mkdir -p "$tmp/$pkg"
	tar -xzf "$tmp/$tgz" -C "$tmp/$pkg"
	for f in "$@"; do
		cp "$tmp/$pkg/package/$f" "$out/"
		name=$(basename "$f")
		echo "$pkg $ver $name $(sha256 "$out/$name")" >>"$tmp/VERSIONS"
	done
}

rm -rf "$out"
mkdir -p "$out"
take react "$REACT" umd/react.production.min.js
take react-dom "$REACT" umd/react-dom.production.min.js
take graphiql "$GRAPHIQL" graphiql.min.js graphiql.min.css
{
	echo "# package version file sha256 — written by fetch.sh; do not edit"
	cat "$tmp/VERSIONS"
} >"$out/VERSIONS"
cat "$out/VERSIONS"
