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
cat > "$destination/lib/systemd/user/snoozefuse-resume.service" <<UNIT
[Unit]
Description=Ring the alarm of a nap that a reboot interrupted (snoozefuse resume)

[Service]
Type=simple
ExecStart=$prefix/bin/snoozefuse resume --if-interrupted

[Install]
WantedBy=default.target
UNIT
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
