#!/bin/sh
# Installs snoozefuse into PREFIX (default /usr/local) from a folder of built products:
#   PREFIX/bin/snoozefuse
#   PREFIX/lib/snoozefuse/snoozefuse-plugin-host        (the only program that loads plugins)
#   PREFIX/lib/snoozefuse/snoozefuse-guardian           (a nap's guardian while it waits)
#   PREFIX/lib/snoozefuse/plugins/libsnoozefuse-*.so   (the built-in plugins)
#   PREFIX/share/snoozefuse/sounds/*.caf                (the built-in alarm sounds)
#   PREFIX/lib/systemd/user/snoozefuse-resume.service    (rings a nap a reboot interrupted, at login:
#                                                        systemctl --user enable snoozefuse-resume)
#   PREFIX/share/man/man1/snoozefuse.1                  (the manual: Documentation/snoozefuse.1)
#   PREFIX/share/bash-completion/completions/snoozefuse, PREFIX/share/zsh/site-functions/_snoozefuse,
#   PREFIX/share/fish/vendor_completions.d/snoozefuse.fish   (completions, from the argument parser)
# The binary finds the others from its own location, so the tree can be moved as a whole.
# Plugins are installed 0644 in folders 0755: snoozefuse refuses plugins that others can write.
#
# usage: Scripts/install.sh PRODUCTS_FOLDER [PREFIX]      (DESTDIR is honoured for packaging)
set -eu
products=${1:?usage: Scripts/install.sh PRODUCTS_FOLDER [PREFIX]}
prefix=${2:-/usr/local}
root=$(cd "$(dirname "$0")/.." && pwd)
destination="${DESTDIR:-}$prefix"

if [ ! -x "$products/snoozefuse" ]; then
    echo "install.sh: $products/snoozefuse is missing: build first (make build)" >&2
    exit 66
fi
missing=""
[ -x "$products/snoozefuse-plugin-host" ] || missing=" snoozefuse-plugin-host"
[ -x "$products/snoozefuse-guardian" ] || missing="$missing snoozefuse-guardian"
for plugin in tone noise terminal command led rumble; do
    [ -f "$products/libsnoozefuse-$plugin.so" ] || missing="$missing libsnoozefuse-$plugin.so"
done
if [ -n "$missing" ]; then
    echo "install.sh: built products missing in $products:$missing (make install builds them)" >&2
    exit 66
fi

# The built-in sounds go to PREFIX/share/snoozefuse/sounds: with PREFIX ~/.local that is the folder of
# the sounds you import (XDG_DATA_HOME/snoozefuse), and the two would mix.
data_home="${XDG_DATA_HOME:-${HOME:-/nonexistent}/.local/share}"
share_real=$(cd "$prefix/share" 2>/dev/null && pwd -P || true)
data_real=$(cd "$data_home" 2>/dev/null && pwd -P || true)
if [ -z "${DESTDIR:-}" ] && { [ "${prefix%/}/share" = "${data_home%/}" ] || { [ -n "$share_real" ] && [ "$share_real" = "$data_real" ]; }; }; then
    echo "install.sh: $prefix/share/snoozefuse is where snoozefuse keeps the sounds you import: install elsewhere (for example PREFIX=$prefix/opt/snoozefuse, with a link to its bin/snoozefuse in $prefix/bin), or use the tarball's install.sh (make dist), which does that" >&2
    exit 64
fi

umask 022
install -d "$destination/bin" "$destination/lib/snoozefuse/plugins" "$destination/share/snoozefuse/sounds"
install -m 0755 "$products/snoozefuse" "$destination/bin/snoozefuse"
install -m 0755 "$products/snoozefuse-plugin-host" "$destination/lib/snoozefuse/snoozefuse-plugin-host"
install -m 0755 "$products/snoozefuse-guardian" "$destination/lib/snoozefuse/snoozefuse-guardian"
for plugin in tone noise terminal command led rumble; do
    install -m 0644 "$products/libsnoozefuse-$plugin.so" "$destination/lib/snoozefuse/plugins/"
done
install -m 0644 "$root"/Sounds/*.caf "$destination/share/snoozefuse/sounds/"
install -d "$destination/lib/systemd/user"
# The unit from its template (Packaging/snoozefuse-resume.service.in), with this prefix's command
# (quoted if it holds a space, its % doubled: as systemd reads them).
command=$(printf '%s\n' "$prefix/bin/snoozefuse" | sed 's/%/%%/g')
case "$command" in *[[:space:]]*) command="\"$command\"" ;; esac
command=$(printf '%s\n' "$command" | sed 's/[\\&|]/\\&/g')
sed "s|@COMMAND@|$command|g" "$root/Packaging/snoozefuse-resume.service.in" > "$destination/lib/systemd/user/snoozefuse-resume.service"
chmod 0644 "$destination/lib/systemd/user/snoozefuse-resume.service"
install -d "$destination/share/man/man1" "$destination/share/bash-completion/completions" \
    "$destination/share/zsh/site-functions" "$destination/share/fish/vendor_completions.d"
install -m 0644 "$root/Documentation/snoozefuse.1" "$destination/share/man/man1/snoozefuse.1"
"$products/snoozefuse" --generate-completion-script bash > "$destination/share/bash-completion/completions/snoozefuse"
"$products/snoozefuse" --generate-completion-script zsh > "$destination/share/zsh/site-functions/_snoozefuse"
"$products/snoozefuse" --generate-completion-script fish > "$destination/share/fish/vendor_completions.d/snoozefuse.fish"
chmod 0644 "$destination/share/bash-completion/completions/snoozefuse" "$destination/share/zsh/site-functions/_snoozefuse" \
    "$destination/share/fish/vendor_completions.d/snoozefuse.fish"
echo "installed snoozefuse in $destination (bin, lib/snoozefuse, lib/snoozefuse/plugins, share/snoozefuse/sounds, lib/systemd/user, share/man, completions for bash, zsh and fish)"
echo "to ring naps a reboot interrupted, at login: systemctl --user enable snoozefuse-resume.service"
