#!/bin/sh
# Writes the manual page Documentation/snoozefuse.1 from the argument parser (every command, option
# and help text), with swift-argument-parser's generate-manual tool, and tidies it for mandoc/groff
# (a blank line becomes a paragraph break). The page is kept in git, so `make install` needs no
# extra build; the tests check that it documents every option the binary has.
#
# usage: Scripts/make-man.sh [SWIFT]            (make man)
set -eu
swift=${1:-swift}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
$swift build --product snoozefuse
$swift build --product generate-manual
bin=$($swift build --show-bin-path)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The date of the last commit: the page changes only when the program does.
date=$(git log -1 --format=%cs 2>/dev/null || date +%F)
# The product's executable is `generate-manual` (`generate-manual-tool` when the package plugin
# built it).
tool="$bin/generate-manual"
[ -x "$tool" ] || tool="$bin/generate-manual-tool"
# generate-manual drops every character that is not ASCII ("1–100" became "1100"): it reads the
# help through a stand-in that writes each such character as an ASCII mark (@@u2013@@), and the
# marks become roff's escapes for them (\[u2013]), which man and mandoc render in any locale.
cat > "$work/snoozefuse" <<STANDIN
#!/bin/sh
"$bin/snoozefuse" "\$@" | python3 -c 'import sys; sys.stdout.write("".join(c if ord(c) < 128 else "@@u%04X@@" % ord(c) for c in sys.stdin.buffer.read().decode("utf-8", "replace")))'
STANDIN
chmod +x "$work/snoozefuse"
"$tool" "$work/snoozefuse" --date "$date" --authors "the snoozefuse developers" -o "$work"
sed -e 's/^[[:space:]]*$/.Pp/' -e 's/@@u\([0-9A-F]*\)@@/\\[u\1]/g' "$work/snoozefuse.1" > Documentation/snoozefuse.1
echo "wrote Documentation/snoozefuse.1 (man -l Documentation/snoozefuse.1)"
