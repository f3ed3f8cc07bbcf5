# User entry points. `make demo` runs the main job, `make test` runs every test.
# Both install missing Debian packages first (scripts/install-deps.sh).
.PHONY: demo test bench fuzz deps build build-test build-fuzz build-tsan clean

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

demo: build
	./scripts/demo.sh

test: build-test build-fuzz build-tsan
	FUZZ_SECONDS=$(if $(CI),10,$(FUZZ_SECONDS)) ./scripts/fuzz-smoke.sh build-fuzz
	ctest --preset tsan
	ctest --preset test

bench: build
	./scripts/bench.sh

fuzz: build-fuzz
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./scripts/fuzz-smoke.sh build-fuzz

clean:
	rm -rf build build-test build-fuzz build-tsan
