# snoozefuse: one command to try it, one to test it.
#   make demo   install what is missing, build, and take a nap with the built-in defaults
#   make test   install what is missing, build with warnings as failures, run every test
SWIFT ?= swift
CONFIG ?= release
PREFIX ?= /usr/local
# The shipped build: the Swift runtime linked in statically, a position-dependent executable (no
# start-up relocation of the whole binary), and the functions an alarm runs (and the data the short
# commands touch) laid out together by lld from Scripts/link-order.txt (Scripts/link-order.sh
# explains and regenerates it), and none of its 14,000 Swift symbols exported (SwiftPM exports an
# executable's symbols for tests that link it; ours are never linked against, and the table cost
# every process 1.6 MiB and its loader the work of searching it). Each keeps memory small (SPEC §8:
# a playing alarm's peak RSS 33 -> 26 -> 19 MiB). Plugins, in C or Swift, still load (in a child
# process). Every Swift function of this package and its dependencies gets a section of its own
# (-function-sections), so the order places each function rather than each source file's whole
# code (issue 23: status 425 -> 402 page faults and 12.4 -> 10.5 MiB, the toolchain's own static
# libraries being as they come).
# The compiler keeps an object file whose module is unchanged, even when the code-generation flags
# changed; a change of RELEASE_FLAGS drops the release objects so that they are compiled with it.
#
# The C++ standard library that the Swift runtime uses is linked in statically as well: the
# release link finds libstdc++.a first (a folder holding only a link to it, searched before the
# compiler's own). Loading the shared libstdc++ (its relocations, its symbol lookups, its start-up)
# was a third of `--version` and 1.2 MiB of a playing alarm (issue 23).
#
# Every program links .build/build-stamp.o (Scripts/build-stamp.sh): the commit it is built from,
# which --version prints; a new commit relinks, it recompiles nothing.
LINK_ORDER := $(CURDIR)/Scripts/link-order.txt
STATIC_CXX := $(CURDIR)/.build/static-c++
BUILD_STAMP := $(CURDIR)/.build/build-stamp.o
RELEASE_FLAGS ?= -Xswiftc -L -Xswiftc $(STATIC_CXX) --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie \
	-Xswiftc -use-ld=lld -Xlinker --symbol-ordering-file=$(LINK_ORDER) -Xlinker --no-warn-symbol-ordering \
	-Xlinker --no-export-dynamic -Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xlinker $(BUILD_STAMP)

.PHONY: deps build plugins link-order install man demo test test-asan test-tsan check-warnings check-imports fuzz fuzz-durations bench bench-quick bench-wakeups clean sounds deb dist package-test

deps:
	@./Scripts/install-deps.sh

# A new link order is not a source change to the build system: drop the old binary so it relinks.
build: deps
	@clang="$$(dirname "$$(command -v $(SWIFT))")/clang"; [ -x "$$clang" ] || clang=cc; \
		archive="$$("$$clang" -print-file-name=libstdc++.a)"; if [ ! -f "$$archive" ]; then \
		echo "make: libstdc++.a (the static C++ library) is missing ($$clang -print-file-name=libstdc++.a): apt-get install libstdc++-12-dev" >&2; exit 69; fi; \
		mkdir -p "$(STATIC_CXX)" && ln -sfn "$$archive" "$(STATIC_CXX)/libstdc++.a"
	@if [ -e .build/$(CONFIG)/snoozefuse ] && [ $(LINK_ORDER) -nt .build/$(CONFIG)/snoozefuse ]; then rm -f .build/$(CONFIG)/snoozefuse; fi
	@./Scripts/build-stamp.sh
	@for program in snoozefuse snoozefuse-plugin-host snoozefuse-guardian; do \
		if [ -e .build/$(CONFIG)/$$program ] && [ $(BUILD_STAMP) -nt .build/$(CONFIG)/$$program ]; then rm -f .build/$(CONFIG)/$$program; fi; done
	@if [ "$$(cat .build/$(CONFIG)-flags.txt 2>/dev/null)" != "$(RELEASE_FLAGS)" ]; then mkdir -p .build; \
		if [ -d .build/$(CONFIG) ]; then find -L .build/$(CONFIG) -name '*.swift.o' -delete; fi; \
		echo "$(RELEASE_FLAGS)" > .build/$(CONFIG)-flags.txt; fi
	$(SWIFT) build -c $(CONFIG) --product snoozefuse $(RELEASE_FLAGS)
	$(SWIFT) build -c $(CONFIG) --product snoozefuse-plugin-host $(RELEASE_FLAGS)
	$(SWIFT) build -c $(CONFIG) --product snoozefuse-guardian $(RELEASE_FLAGS)
	@./Scripts/build-plugins.sh .build/$(CONFIG)

# The built-in plugins, as C with the system's compiler (Scripts/build-plugins.sh says why), next
# to the programs of the release build.
plugins:
	./Scripts/build-plugins.sh .build/$(CONFIG)

# Re-profile which functions an alarm runs (valgrind), then relink with the new order.
link-order: build
	./Scripts/link-order.sh .build/$(CONFIG)/snoozefuse
	$(MAKE) build

# PREFIX/bin, PREFIX/lib/snoozefuse/plugins, PREFIX/share/snoozefuse/sounds (DESTDIR for packaging).
# Only this package's products: building every product would also link the dependencies' own
# (GRDB's dynamic library cannot link against the static Swift runtime). The plugins are `build`'s.
install: build
	./Scripts/install.sh "$$($(SWIFT) build -c $(CONFIG) --show-bin-path $(RELEASE_FLAGS))" "$(PREFIX)"

# dist/snoozefuse_VERSION_ARCH.deb, and its programs' debug information beside it
# (dist/snoozefuse_VERSION_ARCH.debug.tar.xz): Scripts/make-deb.sh says what is in it. Built with
# dpkg-deb from a control file kept in Packaging/, not with debhelper: the build is SwiftPM's (no
# debian/rules to drive), and the programs link the Swift runtime statically and open every other
# library lazily, so dh_shlibdeps would find nothing to depend on; the Depends come from
# Packaging/runtime-libraries.txt, which a test keeps in step with the code. The version comes from
# Sources/SnoozeFuseSystem/BuildStamp.swift, its one place (what --version prints).
deb: build
	./Scripts/make-deb.sh "$$($(SWIFT) build -c $(CONFIG) --show-bin-path $(RELEASE_FLAGS))" dist

# dist/snoozefuse-VERSION-linux-ARCH.tar.gz: the same programs as a tree that installs anywhere
# (its install.sh: under ~/.local by default, the tree in ~/.local/opt/snoozefuse and the command
# in ~/.local/bin), for distributions other than Debian's.
dist: build
	./Scripts/make-dist.sh "$$($(SWIFT) build -c $(CONFIG) --show-bin-path $(RELEASE_FLAGS))" dist

# Installs the .deb (with apt, its Depends from Debian's registry) and the tarball in clean Debian
# 12 roots made here (mmdebstrap; kept in .build/package-test between runs) with no Swift in them,
# and uses them there as a person would: Scripts/package-test.py.
package-test: deb dist
	./Scripts/package-test.py dist

# Documentation/snoozefuse.1 again from the argument parser (after changing a command or option;
# the tests say when it is stale). make install installs it and the bash, zsh and fish completions.
man:
	./Scripts/make-man.sh "$(SWIFT)"

# On a terminal: hold any key while you drift off; elsewhere the release timer starts at once.
demo: build
	@if [ -t 0 ]; then .build/$(CONFIG)/snoozefuse nap; else .build/$(CONFIG)/snoozefuse nap --no-hold; fi

# A clean build must print no warning from the project's own code.
check-warnings: deps
	@$(SWIFT) build --build-tests 2>&1 | tee .build-warnings.log | grep -E "error:|Compiling|Build" | tail -3
	@if grep -E "/(Sources|Tests|Plugins|Examples)/.*warning:" .build-warnings.log; then \
		echo "make: the build has warnings (above)" >&2; rm -f .build-warnings.log; exit 1; fi
	@rm -f .build-warnings.log

# Package.swift declares exactly what the code imports, and the layers hold (ARCHITECTURE.md).
check-imports: deps
	@./Scripts/check-imports.py

test: check-warnings check-imports
	@mkdir -p Fuzz/out
	@./Fuzz/fuzz.sh durations 100000 > Fuzz/out/durations.log 2>&1 || { tail -40 Fuzz/out/durations.log; echo "make: the duration fuzzer failed (Fuzz/out/durations.log)" >&2; exit 1; }
	@grep -E "^Done" Fuzz/out/durations.log | sed 's/^/duration fuzzer: /'
	./Scripts/run-tests.sh

# The whole suite with every target built under a sanitizer, in a build folder of its own (the
# programs the tests start are the sanitized ones too). Not run by CI: each takes a full build.
test-asan: deps
	ASAN_OPTIONS="$${ASAN_OPTIONS:-detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0}" ./Scripts/run-tests.sh --sanitize=address --build-path .build/asan

# ThreadSanitizer's reports go to .build/tsan/reports/ (a program with one does not fail for it,
# so that one report does not hide the next); the run ends with the reports counted by place.
test-tsan: deps
	@rm -rf .build/tsan/reports && mkdir -p .build/tsan/reports
	-TSAN_OPTIONS="$${TSAN_OPTIONS:-handle_segv=0:exitcode=0:log_path=$(CURDIR)/.build/tsan/reports/tsan}" ./Scripts/run-tests.sh --sanitize=thread --build-path .build/tsan
	@echo "ThreadSanitizer reports by place (.build/tsan/reports/):"
	@cat .build/tsan/reports/* 2>/dev/null | sed -nE 's/^SUMMARY: ThreadSanitizer: ([^/]*)(\/[^ :]*[^ ]*).*/\1\2/p' | sort | uniq -c | sort -rn

fuzz: fuzz-durations
	./Fuzz/fuzz.sh caf 1000000
	./Fuzz/fuzz.sh control 300000
	./Fuzz/fuzz.sh x11 300000
	./Fuzz/fuzz.sh json 1000000

fuzz-durations: deps
	./Fuzz/fuzz.sh durations 1000000

# Re-render the built-in alarm sounds in Sounds/ (deterministic: same bytes every run).
sounds: deps
	$(SWIFT) run snoozefuse-make-sounds Sounds

# Benchmarks (SPEC §8), each side by side with its peer tool in the same run, alternating.
# Every benchmark, written to Benchmarks/RESULTS.md (installs the peers it needs; not run by CI);
# `Scripts/bench-report.sh --only SECTION…` runs some of them.
bench: deps
	./Scripts/bench-report.sh

bench-quick: deps
	./Scripts/bench-report.sh --quick

bench-wakeups: build
	python3 Scripts/bench-report.py --only wakeups

clean:
	rm -rf .build Fuzz/out
