#!/bin/sh
# Installs snoozefuse from this unpacked tarball (make dist), for any Linux distribution:
#
#   ./install.sh                     into ~/.local (the command in ~/.local/bin)
#   ./install.sh --prefix DIR        into DIR (DIR/bin/snoozefuse; the rest in DIR/opt/snoozefuse)
#   ./install.sh --uninstall [--prefix DIR]   removes what an install there put down
#                                    (DIR/opt/snoozefuse/install.sh --uninstall works too)
#
# The tree goes whole into PREFIX/opt/snoozefuse (snoozefuse finds its plugin host, guardian,
# plugins and sounds from its own location), with PREFIX/bin/snoozefuse a link to its program, and
# the manual and the bash, zsh and fish completions copied where man and the shells look
# (PREFIX/share/…). Kept apart so that under ~/.local the built-in sounds never mix with the sounds
# you import (~/.local/share/snoozefuse, which an install and an uninstall leave alone). It writes
# the systemd user unit that rings a nap a reboot interrupted, with the installed path in it, where
# `systemctl --user` finds it (~/.local/share/systemd/user for a user or an install in the home
# folder; PREFIX/lib/systemd/user or /etc/systemd/user for root elsewhere), keeps a list of what it
# installed for --uninstall (PREFIX/opt/snoozefuse/installed-files), and says which run-time
# libraries the machine lacks.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=""
uninstall=no
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a folder" >&2; exit 64; }; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --uninstall) uninstall=yes; shift ;;
        -h|--help) sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown option '$1' (--prefix DIR, --uninstall, --help)" >&2; exit 64 ;;
    esac
done
if [ -z "$prefix" ]; then
    if [ "$uninstall" = yes ] && [ "$(basename "$here")" = snoozefuse ] && [ "$(basename "$(dirname "$here")")" = opt ]; then
        # install.sh --uninstall run from an installed tree: its prefix.
        prefix=$(dirname "$(dirname "$here")")
    else
        [ -n "${HOME:-}" ] || { echo "install.sh: HOME is not set: say where with --prefix DIR" >&2; exit 64; }
        prefix="$HOME/.local"
    fi
fi
case "$prefix" in /*) ;; *) prefix="$(pwd)/$prefix" ;; esac
# One form of the folder: no trailing or doubled slashes.
prefix=$(printf '%s\n' "$prefix" | sed 's|//*|/|g; s|\(.\)/$|\1|')
tree="$prefix/opt/snoozefuse"
manifest="$tree/installed-files"
user_units="${XDG_DATA_HOME:-${HOME:-/nonexistent}/.local/share}/systemd/user"

# Removes the files listed in MANIFEST that are not in KEEP (a file; empty: remove all), each only
# if it lies in the prefix or is the user unit this script writes, then the folders left empty.
remove_listed() {
    while IFS= read -r file; do
        case "$file" in
            "$prefix"/*|*/systemd/user/snoozefuse-resume.service) ;;
            *) continue ;;
        esac
        if [ -n "$2" ] && grep -qxF "$file" "$2"; then continue; fi
        rm -f "$file"
    done < "$1"
    for folder in "$tree/lib/snoozefuse/plugins" "$tree/lib/snoozefuse" "$tree/share/snoozefuse/sounds" \
                  "$tree/share/snoozefuse" "$tree/share/doc/snoozefuse" "$tree/share/doc" "$tree/share/man/man1" \
                  "$tree/share/man" "$tree/share/bash-completion/completions" "$tree/share/bash-completion" \
                  "$tree/share/zsh/site-functions" "$tree/share/zsh" "$tree/share/fish/vendor_completions.d" \
                  "$tree/share/fish" "$tree/share" "$tree/lib" "$tree/bin" "$tree" "$prefix/opt"; do
        rmdir "$folder" 2>/dev/null || true
    done
}

if [ "$uninstall" = yes ]; then
    [ -f "$manifest" ] || { echo "install.sh: no snoozefuse installed in $prefix ($manifest is missing)" >&2; exit 66; }
    if [ -x "$prefix/bin/snoozefuse" ] && "$prefix/bin/snoozefuse" status --json 2>/dev/null \
            | grep -Eq '"status" *: *"(running|ringing|snoozed|guarded)"'; then
        echo "install.sh: a nap is running from $prefix: stop it first (snoozefuse stop)" >&2
        exit 75
    fi
    if command -v systemctl >/dev/null 2>&1 && [ "$(id -u)" -ne 0 ]; then
        systemctl --user disable snoozefuse-resume.service >/dev/null 2>&1 || true
    fi
    remove_listed "$manifest" ""
    rm -f "$manifest"
    rmdir "$tree" "$prefix/opt" 2>/dev/null || true
    echo "removed snoozefuse from $prefix (your sounds, history and settings stay in ~/.local/share/snoozefuse and ~/.config/snoozefuse)"
    exit 0
fi

if [ "$here" = "$tree" ]; then
    echo "install.sh: this is the installed copy in $tree: run the install.sh of an unpacked tarball (or this one with --uninstall)" >&2
    exit 64
fi
[ -x "$here/bin/snoozefuse" ] || { echo "install.sh: $here/bin/snoozefuse is missing: unpack the whole tarball and run its install.sh" >&2; exit 66; }
umask 022
mkdir -p "$prefix" || { echo "install.sh: cannot make $prefix: choose another with --prefix DIR" >&2; exit 73; }
[ -w "$prefix" ] || { echo "install.sh: $prefix is not writable by $(id -un): choose another with --prefix DIR, or run as root" >&2; exit 77; }

installed=$(mktemp)
trap 'rm -f "$installed"' EXIT
# The tree, whole, and this script with it (for --uninstall).
(cd "$here" && find bin lib share runtime-libraries.txt install.sh -type f) | sort | while IFS= read -r file; do
    mode=0644
    [ -x "$here/$file" ] && mode=0755
    case "$file" in lib/snoozefuse/plugins/*) mode=0644 ;; esac
    install -D -m "$mode" "$here/$file" "$tree/$file"
    echo "$tree/$file" >> "$installed"
done
# The command, and what man and the shells look for beside it.
install -d "$prefix/bin"
ln -sfn "$tree/bin/snoozefuse" "$prefix/bin/snoozefuse"
echo "$prefix/bin/snoozefuse" >> "$installed"
for file in share/man/man1/snoozefuse.1 share/bash-completion/completions/snoozefuse share/zsh/site-functions/_snoozefuse \
            share/fish/vendor_completions.d/snoozefuse.fish; do
    install -D -m 0644 "$here/$file" "$prefix/$file"
    echo "$prefix/$file" >> "$installed"
done

# The user unit, with this prefix's command (quoted if it holds a space, its % doubled: as systemd
# reads them), where
# the user's systemd looks: the user's own folder for an install in the home folder or by a user;
# for root elsewhere, the system's folder for user units.
case "$prefix/" in
    "${HOME:-/nonexistent}"/*) units="$user_units" ;;
    *) if [ "$(id -u)" -ne 0 ]; then
           units="$user_units"
       else
           case "$prefix" in /usr|/usr/local) units="$prefix/lib/systemd/user" ;; *) units=/etc/systemd/user ;; esac
       fi ;;
esac
command=$(printf '%s\n' "$prefix/bin/snoozefuse" | sed 's/%/%%/g')
case "$command" in *[[:space:]]*) command="\"$command\"" ;; esac
command=$(printf '%s\n' "$command" | sed 's/[\\&|]/\\&/g')
mkdir -p "$units"
sed "s|@COMMAND@|$command|g" "$here/share/snoozefuse/snoozefuse-resume.service.in" > "$units/snoozefuse-resume.service"
chmod 0644 "$units/snoozefuse-resume.service"
echo "$units/snoozefuse-resume.service" >> "$installed"
echo "$manifest" >> "$installed"
# An earlier install's files that this one no longer has.
if [ -f "$manifest" ]; then
    remove_listed "$manifest" "$installed"
fi
cp "$installed" "$manifest"
chmod 0644 "$manifest"

echo "installed snoozefuse $("$prefix/bin/snoozefuse" --version | sed 's/^snoozefuse //') in $prefix (the command in $prefix/bin; the rest in $tree)"
# What the machine lacks of the libraries snoozefuse opens (runtime-libraries.txt: each library
# with its Debian package).
ldconfig_program=$(command -v ldconfig 2>/dev/null || true)
[ -n "$ldconfig_program" ] || { [ -x /sbin/ldconfig ] && ldconfig_program=/sbin/ldconfig; } || true
if [ -n "$ldconfig_program" ]; then
    known=$("$ldconfig_program" -p 2>/dev/null || true)
    missing=""
    for library in $(grep -v '^#' "$here/runtime-libraries.txt" | cut -d' ' -f1); do
        printf '%s\n' "$known" | grep -q "^[[:space:]]*$library " || missing="$missing $library"
    done
    if [ -n "$missing" ]; then
        echo "missing run-time libraries:$missing"
        echo "  Debian/Ubuntu: apt install $(grep -v '^#' "$here/runtime-libraries.txt" | cut -d' ' -f2 | sort -u | grep -Evx 'libc6|libgcc-s1' | tr '\n' ' ')"
        echo "  Fedora:        dnf install libsndfile alsa-lib libsamplerate pulseaudio-libs systemd-libs sqlite-libs libebur128 openssl-libs"
        echo "  Arch:          pacman -S libsndfile alsa-lib libsamplerate libpulse systemd-libs sqlite libebur128 openssl"
    fi
else
    echo "note: ldconfig is not here, so the run-time libraries were not checked: snoozefuse doctor says what is missing"
fi
case ":${PATH:-}:" in
    *":$prefix/bin:"*) ;;
    *) echo "note: $prefix/bin is not on your PATH: add it (for example in ~/.profile: PATH=\"$prefix/bin:\$PATH\")" ;;
esac
echo "to ring naps a reboot interrupted, at login: systemctl --user enable snoozefuse-resume.service"
echo "a first nap: snoozefuse nap   (hold a key while you drift off, let go as you fall asleep)"
