# bnstudy. `make` builds ./bnstudy; `make study` regenerates results/;
# `make test` runs every test. See README.md.

CC      ?= cc
CXX     ?= c++
# bnstudy needs libinih and nettle; the tests add GSL (the independent
# reference for num.h and rand.h) and cmocka.
PKGS    := inih nettle
TEST_PKGS := gsl cmocka
# Flags the build needs whatever CFLAGS the caller sets. No -ffast-math and
# no contraction: a fused multiply-add rounds once where the source says
# twice, and results must be the same bits on every build. BN_FLAGS and
# CFLAGS are recorded in every manifest (build.cflags); the include paths
# pkg-config adds name this machine's directories and are not.
CFLAGS  ?= -O2
BN_FLAGS  := -std=c11 -Wall -Wextra -Wpedantic -ffp-contract=off \
             -D_POSIX_C_SOURCE=200809L
BN_CFLAGS := $(BN_FLAGS) $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -lpthread

BUILD   ?= build
BIN     ?= bnstudy
# src/ is a folder per stage of the data path, lowest first (LAYERS;
# scripts/check-layers.sh holds a folder to including only those below
# it, and docs/architecture.md says what each holds). Every include names
# its folder ("model/bn.h") against -Isrc.
LAYERS  := base pop model study figure io claim cli
SRCS    := $(foreach d,$(LAYERS),$(wildcard src/$(d)/*.c))
OBJS    := $(SRCS:src/%.c=$(BUILD)/%.o)
LIBOBJS := $(filter-out $(BUILD)/cli/main.o,$(OBJS))
TSRCS   := $(wildcard tests/*.c)
TOBJS   := $(TSRCS:tests/%.c=$(BUILD)/tests/%.o)
HDRS    := $(wildcard src/*/*.h tests/*.h)
# Each object's headers, as the compiler found them (-MMD -MP): touching
# one header rebuilds only what includes it (the files are included at the
# end, so that none of their rules becomes the default goal).
DEPFLAGS = -MMD -MP

.PHONY: all deps clean test test-quick test-full unit unit-tests check-layers sanitize study study-results \
        study-numbers bench bench-memory \
        test-peer test-peer-if-available figures test-figures \
        check-portable libs tests-libs test-faults test-cli test-shard test-slurm fuzz \
        fuzz-replay FORCE web test-web \
        test-web-if-available test-scenarios test-scenarios-if-available

# A half-written target is deleted when its recipe fails, so the next make
# builds it again instead of trusting it.
.DELETE_ON_ERROR:

all: $(BIN)

# Linked to a temporary name and renamed: a failed link leaves no bnstudy
# behind that a later make would take as up to date.
$(BIN): $(OBJS)
	$(CC) $(BN_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@.tmp $(OBJS) $(LDLIBS)
	@mv -f $@.tmp $@

# A missing library stops the build here with one line naming it and how
# to install it, not at the link with a page of undefined references.
missing = $(shell bash scripts/deps.sh --check $(1) 2>&1)
libs:
	@$(if $(call missing,build),$(error $(call missing,build)))
tests-libs:
	@$(if $(call missing,unit),$(error $(call missing,unit)))

$(BUILD)/%.o: src/%.c | libs
	@mkdir -p $(@D)
	$(CC) $(BN_CFLAGS) $(DEPFLAGS) -Isrc $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

# The build's provenance (scripts/provenance.sh), regenerated on every make
# and replaced only when it changed, so it rebuilds only what it names.
$(BUILD)/provenance_build.h: FORCE
	@mkdir -p $(@D)
	@CC="$(CC)" FLAGS="$(strip $(BN_FLAGS) $(CFLAGS))" bash scripts/provenance.sh > $@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv -f $@.tmp $@; fi
$(BUILD)/io/provenance.o: $(BUILD)/provenance_build.h
$(BUILD)/io/provenance.o: CPPFLAGS += -I$(BUILD)
FORCE:

$(BUILD)/tests/%.o: tests/%.c | tests-libs
	@mkdir -p $(@D)
	$(CC) $(BN_CFLAGS) $(DEPFLAGS) $(shell pkg-config --cflags $(TEST_PKGS) 2>/dev/null) \
		$(CPPFLAGS) -Isrc -Ibench $(CFLAGS) -c -o $@ $<

# bench/: the bare kernels `make bench` sets bnstudy against (the unit
# tests hold them to bnstudy's bits) and the driver that times them.
$(BUILD)/bench/%.o: bench/%.c | libs
	@mkdir -p $(@D)
	$(CC) $(BN_CFLAGS) $(DEPFLAGS) $(CPPFLAGS) -Isrc $(CFLAGS) -c -o $@ $<
$(BUILD)/bench/driver: $(BUILD)/bench/driver.o $(BUILD)/bench/kernel.o \
		$(LIBOBJS)
	$(CC) $(BN_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The web page's glue, built natively too so the unit tests (and the
# sanitizers) reach it.
$(BUILD)/web_glue.o: web/glue.c | libs
	@mkdir -p $(@D)
	$(CC) $(BN_CFLAGS) $(DEPFLAGS) $(CPPFLAGS) -Isrc $(CFLAGS) -c -o $@ $<

$(BUILD)/unit_tests: $(TOBJS) $(LIBOBJS) $(BUILD)/web_glue.o \
		$(BUILD)/bench/kernel.o
	$(CC) $(BN_CFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $^ \
		$(shell pkg-config --libs $(TEST_PKGS)) $(LDLIBS)

# The second, independent PCG32: Debian's pcg_random.hpp.
$(BUILD)/pcg_ref: tests/pcg_ref.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++11 -O2 -o $@ $<

# What building, the study and the tests need, only what is missing, with
# the system's package manager (scripts/deps.sh; NO_INSTALL=1 only reports).
deps:
	@bash scripts/deps.sh all

# Every suite, each ending with its own "N passed, N failed", then their
# total as the last line (scripts/test-all.sh). A few minutes on two
# cores: the sanitizer pass reproduces the quicker part of the study
# (SAN_EXPERIMENTS). make test-full also runs the whole study under the
# sanitizers; CI runs test-full.
test:
	@bash scripts/deps.sh test
	@$(MAKE) --no-print-directory $(BIN) $(BUILD)/unit_tests $(BUILD)/pcg_ref
	@bash scripts/test-all.sh

# A first look in a minute or two, installing no PyTorch (about 2 GB with
# its libraries) and no browser: the include rule, the unit tests, the
# command line's bad inputs, the shards, the figures and the README's
# tables and examples; no sanitizers, no peer or browser test.
test-quick:
	@bash scripts/deps.sh quick
	@$(MAKE) --no-print-directory $(BIN) $(BUILD)/unit_tests $(BUILD)/pcg_ref
	@TEST_QUICK=1 bash scripts/test-all.sh

test-full:
	@bash scripts/deps.sh test
	@$(MAKE) --no-print-directory $(BIN) $(BUILD)/unit_tests $(BUILD)/pcg_ref
	@TEST_FULL=1 bash scripts/test-all.sh

# T="GROUP ..." runs those groups only (build/unit_tests --list names
# them): make unit T=bn.
T ?=
unit unit-tests: $(BIN) $(BUILD)/unit_tests $(BUILD)/pcg_ref
	BNSTUDY=./$(BIN) PCG_REF=$(BUILD)/pcg_ref $(BUILD)/unit_tests $(T)

# The unit tests and the program they drive, built with AddressSanitizer and
# UndefinedBehaviorSanitizer in a build directory of their own. BN_STRICT
# makes an error message that would not fit abort instead of saying so.
SAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all \
             -fno-omit-frame-pointer
# build/san's one setting: sanitize and fuzz-replay share its objects.
SAN_CFLAGS := $(SAN_FLAGS) -DBN_STRICT
SAN_BUILD := --no-print-directory BUILD=build/san BIN=build/san/bnstudy \
             CFLAGS="$(SAN_CFLAGS)" LDFLAGS="$(SAN_FLAGS)"
# The study's numbers under the sanitizers: every experiment but the five
# longest classifier sweeps (the plain unit run reproduces those; make
# test-full runs them all here too, SAN_EXPERIMENTS= empty meaning all).
SAN_EXPERIMENTS ?= $(filter-out clf-digits clf-shift clf-adaptive \
                   clf-grouped clf-fixes-grouped,$(EXPERIMENTS))
sanitize:
	@BN_STUDY_EXPERIMENTS="$(SAN_EXPERIMENTS)" $(MAKE) $(SAN_BUILD) unit-tests

# Fault injection (src/base/fault.h): the program built with BN_FAULT, under the
# sanitizers, and tests/faults.sh walking the k-th allocation, the k-th
# file-system change and a kill at each of them over a whole sweep.
test-faults: $(BIN)
	@$(MAKE) --no-print-directory BUILD=build/fault BIN=build/fault/bnstudy \
		CFLAGS="$(SAN_FLAGS) -DBN_FAULT -DBN_STRICT" LDFLAGS="$(SAN_FLAGS)" \
		build/fault/bnstudy
	@bash tests/faults.sh ./$(BIN) build/fault/bnstudy
	@bash tests/shard.sh --walk build/fault/bnstudy

# The include rule of src/ (scripts/check-layers.sh), and the check itself
# on copies of src/ broken once each way it forbids (tests/layers.sh).
check-layers:
	@bash tests/layers.sh

# The command line as an adversarial user meets it (tests/cli.sh): each
# bad input and fault of docs/errors.md, and what is left on disk.
test-cli: $(BIN)
	@bash tests/cli.sh ./$(BIN)

# Sweeps split with --shard and joined with merge (tests/shard.sh): the
# same bytes as the whole sweep, the refusals, the README's GNU parallel
# and Slurm recipes.
test-shard: $(BIN)
	@bash tests/shard.sh ./$(BIN)

# The Slurm recipe of docs/commands.md submitted to a real one-node Slurm
# on localhost (tests/slurm.sh): as root on Debian it installs slurm-wlm
# and munge when missing, keeps the cluster's files in a temporary
# directory and stops its daemons by pid. Not part of `make test`, which
# installs no daemons; CI runs it.
test-slurm: $(BIN)
	@bash tests/slurm.sh ./$(BIN)

# Fuzzing what users feed bnstudy (tests/fuzz/README.md): libFuzzer from
# clang, one target each for the experiment-file and --set paths (exp),
# the population-file reader (popfile), the files diagnose reads of a
# checkpoint (diagnose), a merge's shards (shard) and the result tables
# verify and plot read (verify). The sources are built once, instrumented,
# in build/fuzz/obj; `make fuzz` runs each target for FUZZ_SECONDS (60)
# in turn, seeded with tests/fuzz/corpus* and inputs tests/fuzz/seeds.sh
# makes with this build; an input that fails is kept as
# build/fuzz/crashes/TARGET-* (copy it to tests/fuzz/crashes/ once fixed).
# fuzz-replay runs every kept input of each target through the same entry
# point under the sanitizers, without clang, for `make test`.
FUZZ_SECONDS ?= 60
FUZZ_CC ?= clang
FUZZ_TARGETS := exp popfile diagnose shard verify
FUZZ_FLAGS := -O1 -g -DBN_STRICT -fsanitize=address,undefined \
              -fno-sanitize-recover=all
FUZZ_OBJS := $(filter-out build/fuzz/obj/cli/main.o,$(SRCS:src/%.c=build/fuzz/obj/%.o))
# Each target's seeds beside its corpus, and its inputs to replay.
fuzz_seeds = $(if $(filter exp,$(1)),tests/fuzz/corpus experiments,tests/fuzz/corpus-$(1)) \
             build/fuzz/seeds/$(1)
fuzz_kept = $(if $(filter exp,$(1)),tests/fuzz/corpus/* experiments/*.ini,tests/fuzz/corpus-$(1)/*) \
            tests/fuzz/crashes/$(1)-*
fuzz_run = echo "== fuzz_$(1), $(FUZZ_SECONDS) s" && \
           mkdir -p build/fuzz/corpus-$(1) && \
           build/fuzz/fuzz_$(1) -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
               -rss_limit_mb=2048 -print_final_stats=1 \
               -artifact_prefix=build/fuzz/crashes/$(1)- \
               build/fuzz/corpus-$(1) $(call fuzz_seeds,$(1))
build/fuzz/obj/%.o: src/%.c | libs
	@mkdir -p $(@D)
	$(FUZZ_CC) $(BN_CFLAGS) $(DEPFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link \
		-Isrc -I$(BUILD) -c -o $@ $<
build/fuzz/obj/io/provenance.o: $(BUILD)/provenance_build.h
build/fuzz/fuzz_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_run.h $(FUZZ_OBJS)
	$(FUZZ_CC) $(BN_CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer -Isrc -Itests/fuzz \
		-o $@ $< $(FUZZ_OBJS) $(LDLIBS)
fuzz: $(FUZZ_TARGETS:%=build/fuzz/fuzz_%) $(BIN)
	@mkdir -p build/fuzz/crashes
	@bash tests/fuzz/seeds.sh ./$(BIN) build/fuzz/seeds
	@$(foreach t,$(FUZZ_TARGETS),$(call fuzz_run,$(t)) &&) true
fuzz-replay: $(FUZZ_TARGETS:%=build/san/fuzz_replay_%)
	@$(foreach t,$(FUZZ_TARGETS),build/san/fuzz_replay_$(t) $(call fuzz_kept,$(t)) &&) true
build/san/fuzz_replay_%: tests/fuzz/fuzz_%.c tests/fuzz/fuzz_run.h tests/fuzz/replay.c FORCE
	@$(MAKE) $(SAN_BUILD) build/san/bnstudy
	$(CC) $(BN_CFLAGS) $(SAN_CFLAGS) -Isrc -Itests/fuzz -o $@ \
		tests/fuzz/fuzz_$*.c tests/fuzz/replay.c \
		$(filter-out build/san/cli/main.o,$(patsubst $(BUILD)/%,build/san/%,$(OBJS))) \
		$(LDLIBS)

# The peer cross-checks (tests/peer/): bnstudy's layer against PyTorch and a
# plain-numpy reference, on feature maps against BatchNorm2d, the
# population-file reader against NumPy, dump_bn_inputs.py's dumps through
# `bnstudy diagnose`, the classifier against PyTorch, and the layer's
# batch-dependence scores and padded sequences against BatchNorm1d.
# Debian's python3-torch is only visible to the system interpreter, not to
# a python3 that may come first on PATH.
PEER_PYTHON ?= /usr/bin/python3

# Test drivers (tests/peer/*.c): small programs the peer scripts call to
# reach library code bnstudy's commands do not expose yet; not part of
# bnstudy.
PEER_DRIVERS := bn2d_driver jacobian_driver
$(BUILD)/%: tests/peer/%.c $(LIBOBJS) $(HDRS)
	@mkdir -p $(@D)
	$(CC) $(BN_CFLAGS) $(CPPFLAGS) -Isrc $(CFLAGS) $(LDFLAGS) -o $@ \
		$< $(LIBOBJS) $(LDLIBS)

# Every peer script runs even when one fails; each ends with its own
# "N passed, N failed" line.
test-peer: $(BIN) $(PEER_DRIVERS:%=$(BUILD)/%)
	@rc=0; \
	$(PEER_PYTHON) tests/peer/peer_torch.py --bnstudy ./$(BIN) || rc=1; \
	$(PEER_PYTHON) tests/peer/peer_bn2d.py --driver $(BUILD)/bn2d_driver || rc=1; \
	$(PEER_PYTHON) tests/peer/peer_popfile.py --bnstudy ./$(BIN) || rc=1; \
	$(PEER_PYTHON) tests/peer/peer_dependence.py --bnstudy ./$(BIN) || rc=1; \
	$(PEER_PYTHON) tests/peer/peer_sequences.py --bnstudy ./$(BIN) || rc=1; \
	$(PEER_PYTHON) tests/peer/peer_dump.py --bnstudy ./$(BIN) || rc=1; \
	$(PEER_PYTHON) tests/peer/peer_clf.py --bnstudy ./$(BIN) \
		--jacobian-driver $(BUILD)/jacobian_driver || rc=1; \
	exit $$rc

# For `make test`: the peer test when its dependencies are there, otherwise a
# line that says it did not run and why, so a skip is never silent.
test-peer-if-available:
	@if reason=$$($(PEER_PYTHON) -c 'import torch, numpy' 2>&1); then \
		$(MAKE) --no-print-directory test-peer; \
	else \
		echo "SKIPPED peer test: $(PEER_PYTHON) cannot import torch and numpy ($$(printf '%s' "$$reason" | tail -n 1))"; \
	fi

# The scenario suite (tests/scenarios/): `bnstudy diagnose` on small
# PyTorch models it did not train, an MLP and a CNN on the Digits data,
# each with one cause injected, dumped and diagnosed as README "Your
# model, then bnstudy" says; about a minute on one thread.
test-scenarios: $(BIN)
	@OMP_NUM_THREADS=1 $(PEER_PYTHON) tests/scenarios/scenarios.py --bnstudy ./$(BIN)

# For `make test`: the scenarios when PyTorch is there; otherwise a line
# that says why not (a failure with REQUIRE_ALL=1, as CI runs it).
test-scenarios-if-available:
	@if reason=$$($(PEER_PYTHON) -c 'import torch, numpy' 2>&1); then \
		$(MAKE) --no-print-directory test-scenarios; \
	elif [ "$${REQUIRE_ALL:-0}" = 1 ]; then \
		echo "scenario suite: $(PEER_PYTHON) cannot import torch and numpy (REQUIRE_ALL=1)"; exit 1; \
	else \
		echo "SKIPPED scenario suite: $(PEER_PYTHON) cannot import torch and numpy ($$(printf '%s' "$$reason" | tail -n 1))"; \
	fi

# The published study: every experiment into $(RESULTS), the claims checked,
# the figures drawn, the reading tables printed. With RESULTS=results (the
# default) the tables of README.md and docs/ are refreshed from the new
# files too.
RESULTS     ?= results
EXPERIMENTS := headline batch-size ordering momentum estimators \
               what-fixes-it precise shuffles real-batch-size real-estimators \
               real-what-fixes-it clf-batch-size clf-grouped clf-shift \
               clf-fixes-few clf-fixes-grouped clf-real-warmup clf-real-fixes \
               clf-digits clf-shift-modes \
               shift clf-adaptive drift drift-momentum collapse initial \
               clf-initial maps-digits maps-field \
               clf-depth clf-norms clf-adam clf-float32 clf-conv-digits \
               clf-radial \
               checkpoint clf-frozen devices clf-devices \
               batch-dependence clf-batch-dependence sequences clf-users \
               clf-checkpoint

study:
	@bash scripts/deps.sh study
	@$(MAKE) --no-print-directory $(BIN)
	@$(MAKE) --no-print-directory study-results RESULTS=$(RESULTS)

study-results: study-numbers
	@cat $(RESULTS)/claims.txt; ! grep -q '^FAIL' $(RESULTS)/claims.txt
	@$(MAKE) --no-print-directory figures RESULTS=$(RESULTS)
	@if [ "$(RESULTS)" = results ]; then bash scripts/readme-tables.sh; fi
	@printf '\nHeadline (%s/headline/table.md)\n\n' $(RESULTS); cat $(RESULTS)/headline/table.md
	@printf '\nBatch size (%s/batch-size/table.md)\n\n' $(RESULTS); cat $(RESULTS)/batch-size/table.md

# The numbers alone: every experiment's files and claims.txt, without
# figures. RUNNER runs the program (an emulator, an environment) and
# check-portable uses it; a failing claim is written down, not an error here.
RUNNER ?=
study-numbers: $(BIN)
	@for e in $(EXPERIMENTS); do \
		$(RUNNER) ./$(BIN) sweep experiments/$$e.ini --out $(RESULTS) || exit 2; \
	done
	@$(RUNNER) ./$(BIN) verify $(RESULTS) > $(RESULTS)/claims.txt.tmp; rc=$$?; \
		if [ $$rc -ge 2 ]; then rm -f $(RESULTS)/claims.txt.tmp; exit $$rc; fi; \
		mv $(RESULTS)/claims.txt.tmp $(RESULTS)/claims.txt

# Every build this machine can run (gcc and clang at -O0 and -O3
# -march=native, glibc without its FMA code paths, aarch64 under qemu-user)
# regenerates the study's numbers, which must be the committed bytes
# (scripts/check-portable.sh; `bash scripts/deps.sh portable` installs
# the compilers and the emulator on Debian).
check-portable:
	@bash scripts/check-portable.sh

# The figures: `bnstudy plot` draws every figure each experiment in
# $(RESULTS) supports, with gnuplot and scripts/*.gp, into
# $(RESULTS)/figures/<experiment>/ (a PNG and an SVG each).
GNUPLOT ?= gnuplot

figures: $(BIN)
	@./$(BIN) plot $(RESULTS) --gnuplot $(GNUPLOT) >/dev/null

test-figures:
	bash tests/figures.sh

# The web page (web/, docs/browser.md): the stages
# bnstudy runs on, compiled to WebAssembly by Debian's emscripten with the
# build's own flags (BN_FLAGS: no contraction, no -ffast-math), and
# web/glue.c, which hands runs and their figures to the page's script
# (web_tables, web_run, web_figures: EXPORTED_FUNCTIONS). The folders above
# figure/ are left out: io/ is what needs libinih or nettle or writes
# result sets, claim/ reads claims files with libinih, cli/ is the
# command line. The .wasm and its loader are built here, never committed.
EMCC     ?= emcc
WEB_LAYERS := base pop model study figure
WEB_SRCS := $(foreach d,$(WEB_LAYERS),$(wildcard src/$(d)/*.c)) web/glue.c
WEB_LDFLAGS := -sMODULARIZE=1 -sEXPORT_NAME=bnstudyModule \
               -sENVIRONMENT=worker -sALLOW_MEMORY_GROWTH=1 -sFILESYSTEM=0 \
               -sEXPORTED_FUNCTIONS=_web_tables,_web_run,_web_figures,_web_give_file,_web_dump_add,_web_dump_report,_malloc,_free \
               -sEXPORTED_RUNTIME_METHODS=cwrap,ccall,HEAPU8
# emcc is a node program; Debian's finds its JavaScript packages in
# /usr/share/nodejs, where a node not installed by Debian does not look.
WEB_ENV  := NODE_PATH=/usr/share/nodejs$${NODE_PATH:+:$$NODE_PATH}

web: web/bnstudy.js

# Built in $(BUILD)/web and copied, the .wasm before the script that
# loads it, so a failed build leaves web/ as it was.
web/bnstudy.js: $(WEB_SRCS) $(HDRS)
	@bash scripts/deps.sh web
	@mkdir -p $(BUILD)/web
	$(WEB_ENV) $(EMCC) $(BN_FLAGS) -Isrc -O2 $(WEB_LDFLAGS) \
		-o $(BUILD)/web/bnstudy.js $(WEB_SRCS)
	@cp $(BUILD)/web/bnstudy.wasm web/bnstudy.wasm
	@cp $(BUILD)/web/bnstudy.js $@

# The browser test (tests/web/): the page in headless Chromium against
# ./bnstudy run, bit for bit. puppeteer-core comes from npm, at the
# versions tests/web/package-lock.json fixes. The screenshot it takes goes
# to WEB_SCREENSHOT (WEB_SCREENSHOT=docs/web.png refreshes the README's).
WEB_SCREENSHOT ?= $(BUILD)/web/screenshot.png
test-web: $(BIN) web/bnstudy.js
	@bash scripts/deps.sh browser
	@[ -d tests/web/node_modules/puppeteer-core ] || \
		npm ci --prefix tests/web --no-audit --no-fund >&2
	@node tests/web/test.mjs --bnstudy ./$(BIN) --web web \
		--screenshot $(WEB_SCREENSHOT)

# For `make test`: the browser test when emscripten, Chromium, node and
# npm are there; otherwise a line that says it did not run and why (a
# failure with REQUIRE_ALL=1, as CI runs it).
test-web-if-available:
	@if reason=$$(bash scripts/deps.sh --check browser 2>&1); then \
		$(MAKE) --no-print-directory test-web; \
	elif [ "$${REQUIRE_ALL:-0}" = 1 ]; then \
		echo "browser test: $$reason (REQUIRE_ALL=1)"; exit 1; \
	else \
		echo "SKIPPED browser test: $$reason"; \
	fi

# Speed and memory (docs/speed.md): instructions first (valgrind, or perf
# where the machine has counters: they do not move with a neighbour's
# load), then bnstudy beside the bare kernels of bench/, numpy and
# PyTorch, the classifier's epoch beside PyTorch's, the cost per value by
# size (and its figure, $(BUILD)/bench/scaling.png and .svg, when gnuplot
# is there); then configurations per second and peak memory of the
# largest published sweep, one thread and all of them, and where make
# study's CPU time goes (bench/study-split.sh). It reports and never
# fails.
bench: $(BIN) $(BUILD)/bench/driver
	@rm -f $(BUILD)/bench/scaling.tsv
	@$(PEER_PYTHON) bench/bench.py --driver $(BUILD)/bench/driver \
		--bnstudy ./$(BIN) --scale-tsv $(BUILD)/bench/scaling.tsv || \
		echo "bench/bench.py did not finish (exit status $$?)"
	@if [ -s $(BUILD)/bench/scaling.tsv ]; then \
		$(GNUPLOT) -e "f = '$(BUILD)/bench/scaling.tsv'; figdir = '$(BUILD)/bench'" \
			scripts/scaling.gp && \
		echo "the scaling figure: $(BUILD)/bench/scaling.png" || \
		echo "scripts/scaling.gp did not draw the scaling figure"; fi
	@bash scripts/bench.sh ./$(BIN)
	@echo; echo "Where make study's CPU time goes (bench/study-split.sh):"; echo
	@EXPERIMENTS="$(EXPERIMENTS)" bash bench/study-split.sh ./$(BIN) $(GNUPLOT)

# Memory flat in the number of configurations (bench/sweep-memory.sh):
# peak memory of a sweep and of a merge of 10^3 and of 10^5
# configurations. A rule of its own, so `make bench` runs it whatever
# bench's own recipe holds.
bench: bench-memory
bench-memory: $(BIN)
	@bash bench/sweep-memory.sh ./$(BIN)

clean:
	rm -rf build $(BIN) web/bnstudy.js web/bnstudy.wasm

# The headers each object was built from (DEPFLAGS), once it was built.
-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
