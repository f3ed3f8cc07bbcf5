# SPDX-License-Identifier: GPL-2.0-only OR Linux-OpenIB
# User entry points. `make demo` runs the main job, `make test` runs every test, `make package` builds the .debs and RPMs.
# Each installs missing Debian packages first (scripts/install-deps.sh).
.PHONY: demo test bench fuzz package deps build build-test build-fuzz build-tsan standalone clean

FUZZ_SECONDS ?= 30

deps:
	@./scripts/install-deps.sh

build: deps
	cmake --preset release >/dev/null
	cmake --build --preset release

build-test: deps
	cmake --preset test >/dev/null
	cmake --build --preset test

# ThreadSanitizer build of the tests labelled tsan only (the tsan build preset names its targets).
build-tsan: deps
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan

build-fuzz: deps
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz --target fuzzers

# The demo runs ibatd, ibat and ibat-load: it builds those (and what they link), not the tests.
DEMO_TARGETS = ibatd ibat_cli ibat-load

demo: deps
	cmake --preset release >/dev/null
	@echo "make demo: building only what the demo runs ($(DEMO_TARGETS)); make test and make bench build the rest"
	cmake --build --preset release --target $(DEMO_TARGETS)
	./scripts/demo.sh

# No tracked file may refer to anything outside the repository (scripts/check-standalone.sh), and
# every source file carries the license's SPDX line (scripts/check-license.sh, COPYING).
standalone:
	@./scripts/check-standalone.sh
	@./scripts/check-license.sh

test: standalone build-test build-fuzz build-tsan
	FUZZ_SECONDS=$(if $(CI),10,$(FUZZ_SECONDS)) ./scripts/fuzz-smoke.sh build-fuzz
	ctest --preset tsan
	ctest --preset test

bench: build
	./scripts/bench.sh

# The .debs (debian/: dpkg-buildpackage, debhelper) and the RPMs (packaging/rpm/ibat.spec:
# rpmbuild) into build-pkg/deb/ and build-pkg/rpm/; each builds only the installed targets.
package: deps
	nice -n 10 ./scripts/package.sh all build-pkg

fuzz: build-fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./scripts/fuzz-smoke.sh build-fuzz

clean:
	rm -rf build build-test build-fuzz build-tsan build-pkg
