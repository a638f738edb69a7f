# Two commands for a fresh machine: `make run` installs what answering needs and asks; `make test` installs
# everything (the other models and providers, the servers, and the test services: PostgreSQL, the BigQuery
# emulator, Chromium) and runs the tests. Each install step leaves a stamp in the venv, so a second `make` is instant.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
Q      ?= Which 10 miners have mined the most blocks?

# llama.cpp is compiled here for this machine's CPU (AVX-512 where present: about twice the speed of a portable
# AVX2 build on these VMs) but never with AMX: the VM advertises AMX yet traps on its instructions.
# The wheel is kept outside the venv, keyed by the CPU's feature flags, so a rebuilt venv reuses it
# and a different CPU gets its own build. PyPI carries only the source of 0.3.36, no wheel (checked 2026-11-28).
LLAMA_VERSION := 0.3.36
NO_AMX        := -mno-amx-tile -mno-amx-int8 -mno-amx-bf16
LLAMA_CMAKE   := -DGGML_NATIVE=ON -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF \
                 -DCMAKE_C_FLAGS='$(NO_AMX)' -DCMAKE_CXX_FLAGS='$(NO_AMX)' \
                 -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
CPU_ID        := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | sha256sum | cut -c1-12)
WHEELS        := $(HOME)/.cache/askchain/wheels/native-$(CPU_ID)
# Answering on the embedded default: its model and the pipeline (the chart's plotly comes with `server`, optional).
RUN_EXTRAS    := model-1_5b,pipeline
ALL_EXTRAS    := model-1_5b,model-0_5b,pipeline,server,mcp,openai,bigquery,postgres,chain,test

# `make compare`: the three methods one after another on the same sample of DATASET (spider, bird or eth), from an
# empty response cache (cached replies would hide latency). Results are kept in git under benchmarks/ and resumable:
# FIRST=K stops after the sample's first K questions, a later run continues.
DATASET ?= spider
N      ?= 200
SEED   ?= 7
FIRST  ?= $(N)
MODEL  ?= qwen2.5-coder-1.5b
METHODS ?= pipeline self-consistency baseline

# `make test-fast`: the tests a developer runs often, without the real model, a browser, a test service (PostgreSQL,
# the BigQuery emulator, anvil) or the scripted tests of half a minute or more (`slow`); the scripted model, SQLite,
# DuckDB and the stored data stand in. `make test` runs everything.
FAST_TESTS ?= not llm and not browser and not bigquery and not postgres and not anvil and not slow

.PHONY: install install-all run test test-fast compare clean llama-batched-bench
install: $(VENV)/.installed
install-all: $(VENV)/.installed-all

# The answering install: llama.cpp, the default model, the pipeline, and `askchain prepare`.
$(VENV)/.installed: pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip wheel
	@ls $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
	  echo "building llama-cpp-python $(LLAMA_VERSION) for this CPU (about 3.5 minutes on 2 cores, once)"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE)" $(BIN)/pip wheel -q --no-cache-dir --no-deps llama-cpp-python==$(LLAMA_VERSION) -w $(WHEELS); }
	$(BIN)/pip install -q $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(BIN)/pip install -q -e ".[$(RUN_EXTRAS)]"
	@echo "preparing the default database's first question: the model, its examples, its schema prompt's state"
	$(BIN)/askchain prepare || echo "askchain prepare failed: the first question will do its work instead"
	touch $@

# Every extra on top: the 0.5B model, remote providers, servers, database clients, chain sync, test tools.
$(VENV)/.installed-all: $(VENV)/.installed
	$(BIN)/pip install -q -e ".[$(ALL_EXTRAS)]"
	touch $@

# What only the tests use beside Python packages; the scripts skip what is already there.
$(VENV)/.test-services: scripts/setup_*.sh | $(VENV)/.installed
	bash scripts/setup_test_services.sh
	touch $@

run: install
	$(BIN)/askchain ask "$(Q)"

test: install-all $(VENV)/.test-services
	$(BIN)/pytest -q

test-fast: install-all
	$(BIN)/pytest -q -m "$(FAST_TESTS)"

compare: install-all
	for method in $(METHODS); do \
	  ASKCHAIN_LLM__CACHE=false $(BIN)/askchain eval $(DATASET) --limit $(N) --seed $(SEED) --first $(FIRST) \
	    --method $$method --model $(MODEL) --out benchmarks/$(DATASET)-$(N)-$(SEED)/$$method || exit 1; \
	done
	$(BIN)/askchain eval compare $(foreach m,$(METHODS),benchmarks/$(DATASET)-$(N)-$(SEED)/$(m))

# llama.cpp's own benchmark, built from the installed llama.cpp with the flags above (once per CPU), for
# `askchain speed`, which prints askchain's tokens/s beside it.
llama-batched-bench: $(BIN)/llama-batched-bench

$(BIN)/llama-batched-bench: $(VENV)/.installed
	@test -x $(WHEELS)/llama-batched-bench || bash scripts/build_llama_batched_bench.sh $(BIN)/python "$(LLAMA_CMAKE)" $(WHEELS)
	cp $(WHEELS)/llama-batched-bench $@

clean:
	rm -rf $(VENV) .venv-bqemu .tools
