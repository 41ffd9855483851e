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

.PHONY: all deps clean test study check-deps

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

study: deps
	@$(MAKE) --no-print-directory bnstudy
	./bnstudy run
	./bnstudy run --order sorted

clean:
	rm -rf $(BUILD) bnstudy
