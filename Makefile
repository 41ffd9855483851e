# bnstudy. `make` builds ./bnstudy; `make study` regenerates results/;
# `make test` runs every test. See README.md.

CC      ?= cc
CXX     ?= c++
PKGS    := gsl inih nettle
# No -ffast-math and no contraction: a fused multiply-add rounds once where
# the source says twice, and results must be the same bits on every build.
CFLAGS  ?= -O2
CFLAGS  += -std=c11 -Wall -Wextra -Wpedantic -ffp-contract=off \
           -D_POSIX_C_SOURCE=200809L
CPPFLAGS += $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS  += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lm -lpthread

BUILD   := build
SRCS    := $(wildcard src/*.c)
OBJS    := $(SRCS:src/%.c=$(BUILD)/%.o)
LIBOBJS := $(filter-out $(BUILD)/main.o,$(OBJS))
TSRCS   := $(wildcard tests/*.c)
TOBJS   := $(TSRCS:tests/%.c=$(BUILD)/tests/%.o)

.PHONY: all deps clean test study study-results

all: bnstudy

bnstudy: $(OBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $(OBJS) $(LDLIBS)

$(BUILD)/%.o: src/%.c $(wildcard src/*.h) | $(BUILD)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%.o: tests/%.c $(wildcard src/*.h tests/*.h) | $(BUILD)
	@mkdir -p $(BUILD)/tests
	$(CC) $(CPPFLAGS) -Isrc $(CFLAGS) -c -o $@ $<

$(BUILD):
	@mkdir -p $(BUILD)

$(BUILD)/unit_tests: $(TOBJS) $(LIBOBJS)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $^ $(shell pkg-config --libs cmocka) $(LDLIBS)

# The second, independent PCG32: Debian's pcg_random.hpp.
$(BUILD)/pcg_ref: tests/pcg_ref.cpp | $(BUILD)
	$(CXX) -std=c++11 -O2 -o $@ $<

deps:
	@bash scripts/deps.sh

test: bnstudy $(BUILD)/unit_tests $(BUILD)/pcg_ref
	BNSTUDY=./bnstudy PCG_REF=$(BUILD)/pcg_ref SHARED=../shared $(BUILD)/unit_tests

# The peer cross-check (tests/peer/): bnstudy's layer against PyTorch and a
# plain-numpy reference. Debian's python3-torch is only visible to the system
# interpreter, not to a python3 that may come first on PATH.
PEER_PYTHON ?= /usr/bin/python3

.PHONY: test-peer test-peer-if-available

test-peer: bnstudy
	$(PEER_PYTHON) tests/peer/peer_torch.py --bnstudy ./bnstudy

# For `make test`: the peer test when its dependencies are there, otherwise a
# line that says it did not run and why, so a skip is never silent.
test-peer-if-available:
	@if reason=$$($(PEER_PYTHON) -c 'import torch, numpy' 2>&1); then \
		$(MAKE) --no-print-directory test-peer; \
	else \
		echo "SKIPPED peer test: $(PEER_PYTHON) cannot import torch and numpy ($$(printf '%s' "$$reason" | tail -n 1))"; \
	fi

# The published study: every experiment into $(RESULTS), the claims checked,
# the figures drawn, the reading tables printed. With RESULTS=results (the
# default) the README's tables are refreshed from the new files too.
RESULTS     ?= results
EXPERIMENTS := headline batch-size ordering momentum

study: deps
	@$(MAKE) --no-print-directory bnstudy
	@$(MAKE) --no-print-directory study-results RESULTS=$(RESULTS)

study-results: bnstudy
	@for e in $(EXPERIMENTS); do \
		./bnstudy sweep experiments/$$e.ini --out $(RESULTS) || exit 2; \
	done
	./bnstudy verify $(RESULTS)
	@if [ "$(RESULTS)" = results ]; then bash scripts/readme-tables.sh; fi
	@printf '\nHeadline (%s/headline/table.md)\n\n' $(RESULTS); cat $(RESULTS)/headline/table.md
	@printf '\nBatch size (%s/batch-size/table.md)\n\n' $(RESULTS); cat $(RESULTS)/batch-size/table.md

clean:
	rm -rf $(BUILD) bnstudy

# The figures (scripts/*.gp, issue 4): each script reads $(RESULTS)/*/*.tsv
# and writes a PNG and an SVG to $(RESULTS)/figures/. style.gp is the shared
# house style the others load, not a figure.
GNUPLOT ?= gnuplot
FIGURE_SCRIPTS := $(filter-out scripts/style.gp,$(wildcard scripts/*.gp))

.PHONY: figures test-figures

figures:
	@command -v $(GNUPLOT) >/dev/null 2>&1 || { echo "gnuplot not found: run make deps" >&2; exit 2; }
	@mkdir -p $(RESULTS)/figures
	@for s in $(FIGURE_SCRIPTS); do \
		$(GNUPLOT) -e "results='$(RESULTS)'" $$s || { echo "figures: $$s failed" >&2; exit 2; }; \
	done

test-figures:
	bash tests/figures.sh
