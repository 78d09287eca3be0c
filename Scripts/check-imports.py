#!/usr/bin/env python3
"""Checks that Package.swift tells the truth about what the code imports, and that the layers hold.

1. Every module a Swift target imports is declared as its dependency (a target or a product).
2. Every target or product a Swift target declares is imported by it somewhere. Executables are
   exempt: a test target depends on one to have it built, not to import it.
3. The layers of ARCHITECTURE.md: a first-party library or program imports only the layers below
   it (LAYERS); in particular the CLI sees the runtime, the sound library and the core, nothing below.
4. The statically linked programs and what they are made of (NO_FOUNDATION) import no Foundation
   (nor FoundationEssentials or FoundationNetworking): Foundation brings 32 MiB of ICU data into a
   static program.

Reads the package with `swift package describe --type json`. Exits 1, naming each file, target and
module, when anything disagrees. Usage: Scripts/check-imports.py
"""
import json
import os
import re
import subprocess
import sys

# Modules of the toolchain and the platform: imported freely, never declared.
PLATFORM = {
    "Foundation", "FoundationEssentials", "FoundationNetworking", "Glibc", "Musl", "Darwin",
    "Dispatch", "Synchronization", "Testing", "XCTest", "_Concurrency", "os",
}

# What each first-party Swift target may import (besides the platform): arrows only point down.
LAYERS = {
    "snoozefuse": {"SnoozeFuseRuntime", "SnoozeFuseSoundLibrary", "SnoozeFuseCore", "ArgumentParser"},
    "snoozefuse-plugin-host": {"SnoozeFusePluginHost", "CPluginProbe", "Logging"},
    "snoozefuse-guardian": {"SnoozeFuseCore"},
    "snoozefuse-make-sounds": {"SnoozeFuseAudio"},
    "SnoozeFuseRuntime": {"SnoozeFuseCore", "SnoozeFuseSystem", "SnoozeFuseAudio", "SnoozeFusePluginHost",
                          "SnoozeFuseSoundLibrary", "SnoozeFuseStore", "Logging"},
    "SnoozeFuseSoundLibrary": {"SnoozeFuseAudio", "SnoozeFuseCAF", "SnoozeFuseStore", "SnoozeFuseSystem", "CLinux"},
    "SnoozeFusePluginHost": {"SnoozeFusePluginABI", "SnoozeFuseSystem", "SnoozeFuseCore", "Logging"},
    "SnoozeFuseAudio": {"SnoozeFuseCore", "SnoozeFuseSystem", "CSndFile", "CALSA", "CSampleRate", "CPulse", "CEbur128"},
    "SnoozeFuseStore": {"GRDB", "CSQLite"},
    "SnoozeFuseSystem": {"CLinux", "CSystemd", "CWayland"},
    "SnoozeFuseCore": set(),
    "SnoozeFuseCAF": set(),
    "SnoozeFuseTestSupport": {"SnoozeFuseSystem"},
}

# Targets whose Swift files may not import Foundation: the programs that are linked statically
# (snoozefuse-guardian, snoozefuse-plugin-host) and the modules they are made of. Foundation, with
# the ICU data it carries, is 32 MiB of a static program.
NO_FOUNDATION = {"snoozefuse-guardian", "snoozefuse-plugin-host", "SnoozeFusePluginHost", "SnoozeFuseSystem",
                 "SnoozeFuseCore", "SnoozeFuseCAF"}
FOUNDATION = {"Foundation", "FoundationEssentials", "FoundationNetworking"}

IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private)\s+)?import\s+(?:(?:struct|class|enum|protocol|func|var|let|typealias)\s+)?([A-Za-z_][A-Za-z0-9_]*)")


def imports_of(folder):
    """{module: [file:line, ...]} for every Swift file below `folder`."""
    found = {}
    for root, _, files in os.walk(folder):
        for name in sorted(files):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(root, name)
            in_block_comment = False
            in_string = False
            with open(path, encoding="utf-8") as source:
                for number, line in enumerate(source, 1):
                    stripped = line.strip()
                    # Multi-line string literals (a script inside a test) hold no imports.
                    if line.count('"""') % 2 == 1:
                        in_string = not in_string
                        continue
                    if in_string:
                        continue
                    if in_block_comment:
                        in_block_comment = "*/" not in stripped
                        continue
                    if stripped.startswith("/*"):
                        in_block_comment = "*/" not in stripped
                        continue
                    match = IMPORT.match(line)
                    if match:
                        found.setdefault(match.group(1), []).append(f"{path}:{number}")
    return found


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    described = subprocess.run(["swift", "package", "describe", "--type", "json"],
                               check=True, capture_output=True, text=True).stdout
    package = json.loads(described)
    targets = {target["name"]: target for target in package["targets"]}
    modules = {target.get("c99name", name): name for name, target in targets.items()}
    problems = []
    for name in sorted(NO_FOUNDATION - targets.keys()):
        problems.append(f"Scripts/check-imports.py: NO_FOUNDATION names {name}, which is no target of Package.swift")
    for name, target in sorted(targets.items()):
        if target.get("module_type") != "SwiftTarget":
            continue
        declared = set(target.get("target_dependencies") or []) | set(target.get("product_dependencies") or [])
        executables = {dependency for dependency in declared if targets.get(dependency, {}).get("type") == "executable"}
        imported = imports_of(target["path"])
        if name in NO_FOUNDATION:
            for module in sorted(FOUNDATION & imported.keys()):
                for place in imported[module]:
                    problems.append(f"{place}: {name} imports {module}, and it may not (NO_FOUNDATION): it is, or goes into, "
                                    "a statically linked program, where Foundation brings 32 MiB of ICU data; use "
                                    "SnoozeFuseCore's JSON and formatting, SnoozeFuseSystem's files, threads and environment")
        for module, places in sorted(imported.items()):
            if module in PLATFORM or modules.get(module) == name:
                continue
            dependency = modules.get(module, module)
            if dependency not in declared:
                problems.append(f"{places[0]}: {name} imports {module}, which Package.swift does not declare as its dependency")
            allowed = LAYERS.get(name)
            if allowed is not None and dependency not in allowed:
                problems.append(f"{places[0]}: {name} imports {module}: below its layer it may import only {', '.join(sorted(allowed)) or 'nothing'}")
        imported_targets = {modules.get(module, module) for module in imported}
        for dependency in sorted(declared - executables):
            if dependency not in imported_targets:
                problems.append(f"Package.swift: {name} declares {dependency} and no file of {target['path']} imports it")
    for problem in problems:
        print(f"check-imports: {problem}", file=sys.stderr)
    if problems:
        print(f"check-imports: {len(problems)} problem(s): make Package.swift and the imports agree", file=sys.stderr)
        return 1
    print(f"check-imports: Package.swift and the imports of {sum(1 for t in targets.values() if t.get('module_type') == 'SwiftTarget')} Swift targets agree")
    return 0


if __name__ == "__main__":
    sys.exit(main())
