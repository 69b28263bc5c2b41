#!/usr/bin/env bash
# build.sh ESDIR WORKDIR — builds Lectern's Elasticsearch analysis plugin (a stable plugin:
# token filters lectern_porter2, lectern_apostrophe_split and lectern_stop_placeholder) from
# the Java source beside this script, compiled with javac --release 17 against the jars of the
# Elasticsearch in ESDIR, and packs it as a plugin zip in WORKDIR. Prints the zip's path, and
# nothing else, on stdout; install it with
# `bin/elasticsearch-plugin install --batch file://<zip>`.
# Needs a JDK (javac and jar): $ES_JAVA_HOME, else $JAVA_HOME, else the one on PATH.
set -euo pipefail

[ $# -eq 2 ] || { echo "usage: $0 ESDIR WORKDIR" >&2; exit 2; }
ESDIR=$(cd "$1" && pwd)
mkdir -p "$2"
WORK=$(cd "$2" && pwd)
SRC=$(cd "$(dirname "$0")" && pwd)/src/main

jdk_tool() {
  local h
  for h in "${ES_JAVA_HOME:-}" "${JAVA_HOME:-}"; do
    if [ -n "$h" ] && [ -x "$h/bin/$1" ]; then echo "$h/bin/$1"; return 0; fi
  done
  command -v "$1" || { echo "build.sh: no $1 found (install a JDK 17+)" >&2; return 1; }
}
JAVAC=$(jdk_tool javac)
JAR=$(jdk_tool jar)

core=$(ls "$ESDIR"/lib/elasticsearch-[0-9]*.jar 2>/dev/null | head -1 || true)
[ -n "$core" ] || { echo "build.sh: no lib/elasticsearch-<version>.jar in $ESDIR" >&2; exit 1; }
ES_VERSION=$(basename "$core" .jar); ES_VERSION=${ES_VERSION#elasticsearch-}

CP=""
for j in "$ESDIR"/lib/elasticsearch-plugin-api-*.jar "$ESDIR"/lib/elasticsearch-plugin-analysis-api-*.jar \
  "$ESDIR"/lib/lucene-core-*.jar "$ESDIR"/lib/lucene-analysis-common-*.jar; do
  [ -f "$j" ] || { echo "build.sh: missing $j" >&2; exit 1; }
  CP=${CP:+$CP:}$j
done

rm -rf "$WORK/classes" "$WORK/plugin"
mkdir -p "$WORK/classes" "$WORK/plugin"
find "$SRC/java" -name '*.java' | sort >"$WORK/sources.txt"
"$JAVAC" --release 17 -nowarn -encoding UTF-8 -cp "$CP" -d "$WORK/classes" @"$WORK/sources.txt" >&2

"$JAR" --create --file "$WORK/plugin/lectern-analysis.jar" -C "$WORK/classes" . >&2
sed "s/@ES_VERSION@/$ES_VERSION/" "$SRC/resources/stable-plugin-descriptor.properties" \
  >"$WORK/plugin/stable-plugin-descriptor.properties"
cp "$SRC/resources/named_components.json" "$WORK/plugin/named_components.json"

ZIP=$WORK/lectern-analysis-$ES_VERSION.zip
rm -f "$ZIP"
# A plugin zip is a plain zip with the jar and descriptors at its root; jar -M writes one
# without a manifest, so no zip tool is needed.
"$JAR" --create --no-manifest --file "$ZIP" -C "$WORK/plugin" . >&2
echo "$ZIP"
