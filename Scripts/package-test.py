#!/usr/bin/env python3
"""Installs snoozefuse where its users do, and uses it there as they would (`make package-test`).

0. lintian on the .deb: no error, every warning fixed or overridden with its reason.
1. A clean Debian 12 root (mmdebstrap --variant=apt bookworm, from this machine's own apt sources
   for bookworm) with what the checks use (a sound server, man, bash-completion, systemd) and no
   Swift; kept as a tar under .build/package-test/ between runs, made again when its recipe changes.
2. The .deb, installed there with `apt-get install ./snoozefuse_…deb` (apt fetches the Depends from
   the registry). As an unprivileged user, with /proc and a tmpfs on /tmp mounted: --version;
   `plugins list` shows the six built-ins and refuses none; a nap with `--source org.snoozefuse.tone`
   on a PulseAudio null sink started inside the root, decided by a recording of the sink's monitor;
   `sounds import` of a WAV; `man snoozefuse` renders; the bash completion completes; the user unit
   passes `systemd-analyze verify`; `apt-get purge snoozefuse` leaves no packaged file behind.
3. The tarball, in a second clean root with only the run-time libraries the README names: its
   install.sh into ~/.local as the user, then the same --version, plugins, nap, sound import and
   manual, the unit it wrote verified, install.sh again over it, and `install.sh --uninstall`
   leaving none of its files and all of the user's (sounds, history).

Each check prints `ok` or `FAILED` with what it saw; the script exits 1 when any failed.
Needs root (chroot, mount), mmdebstrap, and the network to the Debian registry.

usage: Scripts/package-test.py DIST_FOLDER
"""
import glob
import hashlib
import json
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import wave

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CACHE = os.path.join(ROOT, ".build", "package-test")
SUITES = {"bookworm", "bookworm-updates", "bookworm-security"}
# What the checks use inside the roots, beside apt: a sound server and its tools, man, the bash
# completion, systemd (systemd-analyze), useradd, and pgrep.
TOOLS = ["pulseaudio", "pulseaudio-utils", "man-db", "bash-completion", "systemd", "passwd", "procps"]
USER = "napper"
BUILT_INS = ["command", "led", "noise", "rumble", "terminal", "tone"]


def runtime_packages():
    """The Debian packages of the libraries snoozefuse opens (Packaging/runtime-libraries.txt: the
    .deb's Depends, and what the README tells a user of the tarball to install)."""
    packages = []
    for line in open(os.path.join(ROOT, "Packaging", "runtime-libraries.txt"), encoding="utf-8"):
        if line.strip() and not line.startswith("#"):
            package = line.split()[1]
            if package not in packages:
                packages.append(package)
    return packages


failures = []


def check(name, passed, seen=""):
    print(("ok      " if passed else "FAILED  ") + name + ("" if passed or not seen else f"\n        saw: {seen.strip()[:2000]}"), flush=True)
    if not passed:
        failures.append(name)
    return passed


def run(arguments, **options):
    """`arguments` to their end; one that outlives its `timeout` is ended and reads as exit 124."""
    try:
        return subprocess.run(arguments, capture_output=True, text=True, **options)
    except subprocess.TimeoutExpired as expired:
        text = lambda part: part.decode(errors="replace") if isinstance(part, bytes) else (part or "")
        return subprocess.CompletedProcess(arguments, 124, text(expired.stdout),
                                           text(expired.stderr) + f"\n(ended: still running after {options.get('timeout')} s)")


def bookworm_sources():
    """This machine's apt sources for Debian 12 (deb822 stanzas and one-line entries), and nothing
    else: a third-party repository's key is not in a clean root."""
    stanzas = []
    files = sorted(glob.glob("/etc/apt/sources.list.d/*.sources"))
    for path in files:
        for stanza in re.split(r"\n\s*\n", open(path, encoding="utf-8").read()):
            fields = dict(re.findall(r"^([A-Za-z-]+):\s*(.*)$", stanza, re.M))
            if "deb" not in fields.get("Types", "").split() or fields.get("Enabled", "yes") == "no":
                continue
            suites = [s for s in fields.get("Suites", "").split() if s in SUITES]
            # A third-party repository signs with its own key: only Debian's own sources.
            if suites and "debian-archive-keyring" in fields.get("Signed-By", "debian-archive-keyring"):
                stanzas.append({"URIs": fields["URIs"], "Suites": " ".join(suites), "Components": fields.get("Components", "main")})
    lists = [p for p in ["/etc/apt/sources.list"] + sorted(glob.glob("/etc/apt/sources.list.d/*.list")) if os.path.exists(p)]
    for path in lists:
        for line in open(path, encoding="utf-8"):
            options = " ".join(re.findall(r"\[([^]]*)\]", line.split("#")[0]))
            words = re.sub(r"\[[^]]*\]", "", line.split("#")[0]).split()
            if len(words) >= 3 and words[0] == "deb" and words[2] in SUITES and \
                    ("signed-by" not in options or "debian-archive-keyring" in options):
                stanzas.append({"URIs": words[1], "Suites": words[2], "Components": " ".join(words[3:]) or "main"})
    if not stanzas:
        sys.exit("package-test: this machine has no apt source for Debian 12 (bookworm): the clean roots are made from them")
    return "\n".join(f"Types: deb\nURIs: {s['URIs']}\nSuites: {s['Suites']}\nComponents: {s['Components']}\n"
                     "Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg\n" for s in stanzas)


def base_tar():
    """The clean root as a tar, made once for each recipe (sources and tools)."""
    sources = bookworm_sources()
    recipe = hashlib.sha256((sources + " ".join(TOOLS)).encode()).hexdigest()[:16]
    tar = os.path.join(CACHE, f"bookworm-{recipe}.tar")
    if os.path.exists(tar):
        return tar
    os.makedirs(CACHE, exist_ok=True)
    for old in glob.glob(os.path.join(CACHE, "bookworm-*.tar")):
        os.remove(old)
    sources_file = os.path.join(CACHE, "bookworm.sources")
    with open(sources_file, "w", encoding="utf-8") as out:
        out.write(sources)
    # mmdebstrap chooses what it writes from the name's ending: a tar.
    partial = tar[:-len(".tar")] + ".partial.tar"
    print(f"making a clean Debian 12 root (mmdebstrap, once; kept in {os.path.relpath(tar, ROOT)})", flush=True)
    made = run(["mmdebstrap", "--variant=apt", "--include=" + ",".join(TOOLS),
                "--aptopt=Acquire::Check-Valid-Until \"false\"", "bookworm", partial, sources_file], timeout=1800)
    if made.returncode != 0:
        sys.exit("package-test: mmdebstrap failed:\n" + made.stderr[-3000:])
    os.rename(partial, tar)
    return tar


class CleanRoot:
    """A clean root unpacked from the base tar, with /proc and a tmpfs on /tmp mounted while used,
    and an unprivileged user."""

    def __init__(self, name, tar):
        self.path = os.path.realpath(os.path.join(CACHE, name))
        self.tar = tar
        self.mounts = []

    def __enter__(self):
        self.unmount_leftovers()
        shutil.rmtree(self.path, ignore_errors=True)
        os.makedirs(self.path)
        try:
            subprocess.run(["tar", "-C", self.path, "-xf", self.tar], check=True, timeout=600)
            for kind, target in [("proc", "proc"), ("tmpfs", "tmp")]:
                subprocess.run(["mount", "-t", kind, kind, os.path.join(self.path, target)], check=True)
                self.mounts.append(os.path.join(self.path, target))
            os.chmod(os.path.join(self.path, "tmp"), 0o1777)
            shutil.copy("/etc/resolv.conf", os.path.join(self.path, "etc", "resolv.conf"))
            added = self.root(f"useradd -m -s /bin/bash {USER}")
            if added.returncode != 0:
                raise RuntimeError(f"useradd {USER} failed in the clean root: {added.stderr}")
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *_):
        # Whatever was started inside the root (a sound server, a nap) ends with it: the processes
        # whose root folder is this one, and no other.
        for pid in [name for name in os.listdir("/proc") if name.isdigit()]:
            try:
                if os.readlink(f"/proc/{pid}/root") == self.path:
                    os.kill(int(pid), 9)
            except OSError:
                pass
        for target in reversed(self.mounts):
            subprocess.run(["umount", "-l", target])
        shutil.rmtree(self.path, ignore_errors=True)

    def unmount_leftovers(self):
        for line in open("/proc/mounts", encoding="utf-8"):
            target = line.split()[1]
            if target.startswith(self.path + "/"):
                subprocess.run(["umount", "-l", target])

    def root(self, script, timeout=600):
        return run(["chroot", self.path, "/bin/sh", "-c", script], timeout=timeout)

    def user(self, script, timeout=120):
        """`script` in bash as the user, in a login-like environment of its own."""
        environment = ["HOME=/home/" + USER, "USER=" + USER, "LOGNAME=" + USER, "LANG=C.UTF-8", "TERM=dumb",
                       "PATH=/home/napper/.local/bin:/usr/local/bin:/usr/bin:/bin", "XDG_RUNTIME_DIR=/tmp/runtime-" + USER]
        wrapped = f"mkdir -p -m 0700 /tmp/runtime-{USER}; cd; {script}"
        return run(["chroot", self.path, "runuser", "-u", USER, "--", "env", "-i", *environment, "bash", "-c", wrapped],
                   timeout=timeout)

    def file(self, inside):
        return os.path.join(self.path, inside.lstrip("/"))


def no_swift(root):
    found = root.root("find / -xdev \\( -name 'libswiftCore*' -o -name 'swift' -o -name 'swiftc' \\) -print; "
                      "dpkg-query -W -f '${Package}\\n' | grep -i swift || true")
    check("the clean root has no Swift (no libswiftCore, swift, swiftc, or Swift package)",
          found.returncode == 0 and found.stdout.strip() == "", found.stdout + found.stderr)


def uses(root, snoozefuse, label):
    """What a napper does first, with `snoozefuse` as the command."""
    version = root.user(f"{snoozefuse} --version")
    check(f"{label}: --version names the version and the commit",
          version.returncode == 0 and re.fullmatch(r"snoozefuse \d+\.\d+\.\d+ \([0-9a-f]{12}(-dirty)?\)\n", version.stdout) is not None,
          version.stdout + version.stderr)
    plugins = root.user(f"{snoozefuse} plugins list --json")
    try:
        listing = json.loads(plugins.stdout)
        ids = sorted(plugin["id"] for plugin in listing["plugins"])
        problems = listing["problems"]
    except (ValueError, KeyError, TypeError):
        ids, problems = [], ["not the JSON of plugins list"]
    check(f"{label}: plugins list shows the six built-ins and refuses none",
          plugins.returncode == 0 and ids == [f"org.snoozefuse.{name}" for name in BUILT_INS] and problems == [],
          plugins.stdout[-2000:] + plugins.stderr)
    nap(root, snoozefuse, label)
    import_sound(root, snoozefuse, label)


def monitor_levels(raw_path):
    """dBFS of the left channel in 100 ms windows of a 48 kHz s16 stereo recording."""
    data = open(raw_path, "rb").read() if os.path.exists(raw_path) else b""
    frames = len(data) // 4
    samples = struct.unpack(f"<{frames * 2}h", data[:frames * 4])
    levels = []
    for first in range(0, frames - 4800 + 1, 4800):
        left = samples[2 * first:2 * (first + 4800):2]
        rms = math.sqrt(sum(v * v for v in left) / len(left)) / 32768
        levels.append(20 * math.log10(rms) if rms > 0 else -120.0)
    return levels


def nap(root, snoozefuse, label):
    """A nap with the tone plugin on a PulseAudio null sink started in the root; the sink's monitor,
    recorded from before the nap to after it, decides."""
    script = f"""
pulseaudio --daemonize=yes --exit-idle-time=-1 -n --load="module-null-sink sink_name=speakers" \
    --load=module-native-protocol-unix --log-target=file:/tmp/pulse.log || exit 90
for i in $(seq 50); do pactl info >/dev/null 2>&1 && break; sleep 0.1; done
pactl set-default-sink speakers || exit 91
parec -d speakers.monitor --raw --format=s16le --rate=48000 --channels=2 --latency-msec=20 > /tmp/monitor.raw &
recorder=$!
sleep 0.5
{snoozefuse} nap --no-hold --release 0 --nap 1 --fade-in 0 --ring-limit 4 --source org.snoozefuse.tone \
    --events jsonl --quiet > /tmp/events.jsonl 2> /tmp/nap.err
status=$?
sleep 0.5
kill $recorder; wait $recorder 2>/dev/null
pulseaudio --kill
exit $status
"""
    result = root.user(script, timeout=60)
    events = open(root.file("/tmp/events.jsonl"), encoding="utf-8").read() if os.path.exists(root.file("/tmp/events.jsonl")) else ""
    errors = open(root.file("/tmp/nap.err"), encoding="utf-8").read() if os.path.exists(root.file("/tmp/nap.err")) else ""
    levels = monitor_levels(root.file("/tmp/monitor.raw"))
    # The tone beeps (100 ms on, 100 ms off, a pause) for 4 s, its ring limit: at least 3 s of the
    # recording's half seconds hold a beep louder than -30 dBFS.
    halves = [max(levels[first:first + 5]) for first in range(0, len(levels), 5)]
    loud = [level for level in halves if level > -30]
    check(f"{label}: a nap with --source org.snoozefuse.tone rings on the null sink, as its monitor's recording shows "
          f"({len(loud) / 2:.1f} s of half seconds with a beep louder than -30 dBFS, of {len(levels) / 10:.1f} s recorded)",
          result.returncode == 0 and len(loud) >= 6 and '"outcome":"ring_limit"' in events,
          f"exit {result.returncode}; {result.stderr}\nmonitor (dBFS per 100 ms): {' '.join(f'{level:.0f}' for level in levels)}"
          f"\nevents: {events[-1500:]}\nmessages: {errors[-1500:]}")
    check(f"{label}: the nap's own proof of hearing agrees (a 'heard' event)", '"event":"heard"' in events, events[-1500:])
    root.root("rm -f /tmp/monitor.raw /tmp/events.jsonl /tmp/nap.err")


def import_sound(root, snoozefuse, label):
    """A 2 s 880 Hz WAV, made here, imported by the user and then listed."""
    path = root.file("/tmp/doorbell.wav")
    with wave.open(path, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(44100)
        out.writeframes(b"".join(struct.pack("<h", int(12000 * math.sin(2 * math.pi * 880 * n / 44100))) for n in range(88200)))
    os.chmod(path, 0o644)
    imported = root.user(f"{snoozefuse} sounds import /tmp/doorbell.wav && {snoozefuse} sounds list --json")
    try:
        listed = json.loads(imported.stdout[imported.stdout.index("["):])
        built_in = sorted(sound["name"] for sound in listed if sound["builtIn"])
        own = sorted(sound["name"] for sound in listed if not sound["builtIn"])
    except (ValueError, KeyError, TypeError):
        built_in, own = [], []
    # The five built-ins as built-ins, and the imported sound as the user's: the two never mix.
    check(f"{label}: sounds import of a WAV; sounds list then shows the five built-ins and it, the user's",
          imported.returncode == 0 and built_in == ["beep", "chime", "digital", "gentle", "rising"] and own == ["doorbell"],
          imported.stdout[-2000:] + imported.stderr)


def manual(root, label):
    shown = root.user("MANWIDTH=80 man snoozefuse 2>&1")
    check(f"{label}: man snoozefuse renders the manual",
          shown.returncode == 0 and "SNOOZEFUSE(1)" in shown.stdout and "nap" in shown.stdout, shown.stdout[:800])


def depends(root, label):
    """Each library the code opens is found by the loader in the root, in a package the .deb
    depends on: the Depends are the right packages, not only ones that happened to be there."""
    declared = {re.sub(r"\s*\(.*\)", "", part).strip()
                for part in root.root("dpkg-query -W -f '${Depends}' snoozefuse").stdout.split(",")}
    libraries = [line.split()[0] for line in open(os.path.join(ROOT, "Packaging", "runtime-libraries.txt"), encoding="utf-8")
                 if line.strip() and not line.startswith("#")]
    wrong = []
    for library in libraries:
        owner = root.root(f"path=$(ldconfig -p | awk '$1 == \"{library}\" {{print $NF; exit}}'); [ -n \"$path\" ] || exit 1; "
                          "for candidate in \"$path\" \"$(readlink -f \"$path\")\" \"/usr$path\"; do "
                          "dpkg-query -S \"$candidate\" 2>/dev/null && exit 0; done; exit 1")
        package = owner.stdout.split(":")[0].strip() if owner.returncode == 0 else ""
        if package not in declared:
            wrong.append(f"{library} is in '{package or 'no package'}'")
    check(f"{label}: each of the {len(libraries)} libraries the code opens is in a package the .deb depends on",
          not wrong and len(declared) >= 8, "; ".join(wrong) + f" (Depends: {', '.join(sorted(declared))})")


def verify_unit(root, unit, label):
    verified = root.root(f"systemd-analyze verify {unit}")
    check(f"{label}: the user unit {unit} passes systemd-analyze verify",
          verified.returncode == 0 and verified.stderr.strip() == "", verified.stdout + verified.stderr)
    # The same check on a copy that runs a program that is not there fails: it can fail.
    broken = root.root(f"sed 's|^ExecStart=.*|ExecStart=/nonexistent/snoozefuse resume|' {unit} > /tmp/broken-snoozefuse.service && "
                       "systemd-analyze verify /tmp/broken-snoozefuse.service")
    check(f"{label}: systemd-analyze verify does fail for a unit whose program is missing", broken.returncode != 0,
          broken.stdout + broken.stderr)


def lint(deb):
    """lintian: no error, and no warning that the package does not override with its reason."""
    if shutil.which("lintian") is None:
        sys.exit("package-test: lintian is missing: apt-get install lintian")
    linted = run(["lintian", "--allow-root", "--tag-display-limit", "0", deb])
    reported = [line for line in linted.stdout.splitlines() if line[:2] in ("E:", "W:")]
    check(f"lintian {os.path.basename(deb)}: no error and no warning left unexplained", not reported and linted.returncode == 0,
          linted.stdout[-3000:] + linted.stderr[-1000:])


def test_deb(tar, deb):
    label = "deb"
    with CleanRoot("deb-root", tar) as root:
        no_swift(root)
        shutil.copy(deb, root.file("/tmp/" + os.path.basename(deb)))
        installed = root.root("apt-get update -qq -o Acquire::Check-Valid-Until=false && "
                              f"apt-get install -y -qq --no-install-recommends /tmp/{os.path.basename(deb)}")
        if not check(f"{label}: apt-get install ./{os.path.basename(deb)} in the clean root (Depends from the registry)",
                     installed.returncode == 0, installed.stdout[-2000:] + installed.stderr[-2000:]):
            return
        files = root.root("dpkg-query -L snoozefuse").stdout.split()
        depends(root, label)
        uses(root, "snoozefuse", label)
        manual(root, label)
        completion = root.user(". /usr/share/bash-completion/bash_completion; _completion_loader snoozefuse; "
                               "COMP_WORDS=(snoozefuse plu); COMP_CWORD=1; COMP_LINE='snoozefuse plu'; COMP_POINT=14; "
                               "$(complete -p snoozefuse | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p') snoozefuse plu snoozefuse; "
                               "printf '%s\\n' \"${COMPREPLY[@]}\"")
        check(f"{label}: the bash completion loads and completes 'snoozefuse plu' to 'plugins'",
              completion.returncode == 0 and "plugins" in completion.stdout.split(), completion.stdout + completion.stderr)
        verify_unit(root, "/usr/lib/systemd/user/snoozefuse-resume.service", label)
        purged = root.root("apt-get purge -y -qq snoozefuse")
        left = [path for path in files if os.path.isfile(root.file(path)) or os.path.islink(root.file(path))]
        check(f"{label}: apt-get purge snoozefuse leaves none of its {len(files)} paths' files behind",
              purged.returncode == 0 and not left and len(files) > 20, purged.stderr + " left: " + " ".join(left))


def test_tarball(tar, tarball):
    label = "tarball"
    with CleanRoot("tarball-root", tar) as root:
        no_swift(root)
        libraries = root.root("apt-get update -qq -o Acquire::Check-Valid-Until=false && "
                              "apt-get install -y -qq --no-install-recommends " + " ".join(runtime_packages()))
        if not check(f"{label}: the README's run-time packages install ({' '.join(runtime_packages())})",
                     libraries.returncode == 0, libraries.stderr[-2000:]):
            return
        shutil.copy(tarball, root.file("/tmp/" + os.path.basename(tarball)))
        folder = os.path.basename(tarball).split("-linux-")[0]
        installed = root.user(f"tar xzf /tmp/{os.path.basename(tarball)} && ./{folder}/install.sh")
        check(f"{label}: {folder}/install.sh installs into ~/.local as the user",
              installed.returncode == 0 and root.user("test -x ~/.local/bin/snoozefuse").returncode == 0,
              installed.stdout + installed.stderr)
        check(f"{label}: install.sh finds none of the run-time libraries missing", "missing run-time libraries" not in installed.stdout,
              installed.stdout)
        uses(root, "snoozefuse", label)
        manual(root, label)
        unit = f"/home/{USER}/.local/share/systemd/user/snoozefuse-resume.service"
        unit_text = open(root.file(unit), encoding="utf-8").read() if os.path.exists(root.file(unit)) else ""
        check(f"{label}: the user unit runs the installed program",
              f"ExecStart=/home/{USER}/.local/bin/snoozefuse resume --if-interrupted" in unit_text, unit_text)
        verify_unit(root, unit, label)
        again = root.user(f"./{folder}/install.sh")
        check(f"{label}: install.sh again over the install", again.returncode == 0, again.stdout + again.stderr)
        manifest_path = root.file(f"/home/{USER}/.local/opt/snoozefuse/installed-files")
        manifest = open(manifest_path, encoding="utf-8").read().splitlines() if os.path.exists(manifest_path) else []
        data = root.user("ls ~/.local/share/snoozefuse/library.sqlite ~/.local/share/snoozefuse/sounds/*.caf")
        removed = root.user("~/.local/opt/snoozefuse/install.sh --uninstall")
        left = [path for path in manifest if os.path.lexists(root.file(path))]
        check(f"{label}: install.sh --uninstall (the installed copy) leaves none of the {len(manifest)} files it installed",
              removed.returncode == 0 and not left and len(manifest) > 15, removed.stdout + removed.stderr + " left: " + " ".join(left))
        kept = [path for path in data.stdout.split() if not os.path.exists(root.file(path))]
        check(f"{label}: the user's sounds and history survive the uninstall ({len(data.stdout.split())} files)",
              data.returncode == 0 and len(data.stdout.split()) >= 2 and not kept, data.stdout + data.stderr + " gone: " + " ".join(kept))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: Scripts/package-test.py DIST_FOLDER")
    if os.geteuid() != 0:
        sys.exit("package-test: needs root (it makes clean roots with mmdebstrap, chroots into them and mounts /proc there)")
    if shutil.which("mmdebstrap") is None:
        sys.exit("package-test: mmdebstrap is missing: apt-get install mmdebstrap")
    version = re.search(r'static let release = "(.*)"', open(os.path.join(ROOT, "Sources/SnoozeFuseSystem/BuildStamp.swift")).read()).group(1)
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    deb = os.path.join(sys.argv[1], f"snoozefuse_{version}_{arch}.deb")
    tarball = os.path.join(sys.argv[1], f"snoozefuse-{version}-linux-{os.uname().machine}.tar.gz")
    for path, target in [(deb, "make deb"), (tarball, "make dist")]:
        if not os.path.exists(path):
            sys.exit(f"package-test: {path} is missing: {target} writes it")
    lint(deb)
    tar = base_tar()
    test_deb(tar, deb)
    test_tarball(tar, tarball)
    if failures:
        print(f"package-test: {len(failures)} checks FAILED", file=sys.stderr)
        sys.exit(1)
    print("package-test: every check passed")


if __name__ == "__main__":
    main()
