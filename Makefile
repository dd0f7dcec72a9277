# The README's two commands live here: `make audit` and `make test`. Each installs what is missing
# (scripts/setup.sh), configures, builds, and runs. `make build` leaves the binary at build/mps-audit.
#
#   TORCH_PREFIX=<dir>   use this libtorch (a torch wheel's: python3 -c 'import torch; print(torch.utils.cmake_prefix_path)')
#   BUILD_DIR=<dir>      build folder (default build)
#   CMAKE_FLAGS=...      more flags for cmake's configure step
#   CI=true              the library's compiler warnings are errors (MPS_AUDIT_WERROR), so that a new one fails CI
BUILD_DIR ?= build
JOBS ?= $(shell nproc 2>/dev/null || sysctl -n hw.ncpu 2>/dev/null || echo 2)
ifeq ($(shell uname -s),Darwin)
TORCH_PREFIX ?= $(shell python3 -c 'import torch; print(torch.utils.cmake_prefix_path)' 2>/dev/null)
endif
export TORCH_PREFIX
AUDIT_OUT ?= out
LATEST_RELEASE ?= data/pytorch-2.14.1
OLDEST_RELEASE ?= data/pytorch-1.13.1
MPS_AUDIT = $(BUILD_DIR)/mps-audit

PREFIX ?= /usr/local

.PHONY: all setup configure build build-tool test test-newest audit bench install format format-check clean

all: build

setup:
	@scripts/setup.sh

configure: setup
	@test -f $(BUILD_DIR)/CMakeCache.txt || cmake -S . -B $(BUILD_DIR) \
	  $(if $(TORCH_PREFIX),-DCMAKE_PREFIX_PATH=$(TORCH_PREFIX)) $(if $(filter true 1,$(CI)),-DMPS_AUDIT_WERROR=ON) \
	  $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD_DIR) -j$(JOBS)

# The tool alone (the binary and the recorder the plugin and `record` load), not its tests and benchmarks: what
# `make audit` needs before its first result.
build-tool: configure
	cmake --build $(BUILD_DIR) -j$(JOBS) --target mps-audit mps_audit_recorder

test: build
	ctest --test-dir $(BUILD_DIR) --output-on-failure -j$(JOBS)

# The same suite against the newest torch Debian ships (unstable), in a Debian unstable root that
# scripts/newest_torch.sh makes once and reuses, built in build-newest/. CI runs it after `make test`.
test-newest:
	@scripts/newest_torch.sh test

# The default audit: every operator of opspec.yaml's breadth on the best target here (auto: mps, else cuda, else
# emulated MPS), then the registry report for MPS (the newest release shipped in data/, and what changed since the
# oldest one).
AUDIT_TARGET ?= auto
audit: build-tool
	$(MPS_AUDIT) run --target $(AUDIT_TARGET) --spec opspec.yaml --out $(AUDIT_OUT) --format json,md,html,junit,csv,badge
	@echo
	$(MPS_AUDIT) registry --native-functions $(LATEST_RELEASE) --key MPS
	@echo
	$(MPS_AUDIT) registry --native-functions $(LATEST_RELEASE) --key MPS --format json -o $(AUDIT_OUT)/registry-mps.json
	$(MPS_AUDIT) registry --native-functions $(LATEST_RELEASE) --key MPS --format md -o $(AUDIT_OUT)/registry-mps.md
	$(MPS_AUDIT) registry diff $(OLDEST_RELEASE) $(LATEST_RELEASE) --key MPS --format md -o $(AUDIT_OUT)/registry-mps-diff.md
	@echo "wrote $(AUDIT_OUT)/results.{json,md,html,junit.xml,csv}, $(AUDIT_OUT)/badge.svg, $(AUDIT_OUT)/registry-mps.json, $(AUDIT_OUT)/registry-mps.md, $(AUDIT_OUT)/registry-mps-diff.md"

# The binary in PREFIX/bin, the default spec and the release data in PREFIX/share/mps-audit (where the binary finds
# them from any folder), the docs in PREFIX/share/doc/mps-audit.
install: build
	cmake --install $(BUILD_DIR) --prefix $(PREFIX)

bench: build
	$(BUILD_DIR)/bench/mps_audit_bench --benchmark_min_time=0.5

format:
	clang-format -i $$(git ls-files '*.cc' '*.h')

format-check:
	clang-format --dry-run --Werror $$(git ls-files '*.cc' '*.h')

clean:
	rm -rf $(BUILD_DIR)

# The coverage page, docs/coverage.md and docs/coverage.html: every operator across the releases shipped in data/,
# from their registries and PyTorch's own MPS test lists. Run it after changing either, or the code that renders
# them: the test docs.coverage_is_current fails while the checked-in page differs from what this writes. Only the
# source tree's data/ goes in, not the release folders of $MPS_AUDIT_DATA_DIR or $MPS_AUDIT_DATA.
.PHONY: coverage
coverage: build
	MPS_AUDIT_DATA_DIR= MPS_AUDIT_DATA= $(MPS_AUDIT) coverage --format md -o docs/coverage.md
	MPS_AUDIT_DATA_DIR= MPS_AUDIT_DATA= $(MPS_AUDIT) coverage --format html -o docs/coverage.html
