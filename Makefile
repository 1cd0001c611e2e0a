# ridge front door. `make run` and `make test` work on a fresh machine.
BUILD ?= build
BUILD_ASAN ?= build-asan
JOBS ?= $(shell nproc)
PROMPT ?= The capital of France is
PYTHON ?= python3
RIDGE_ARGS ?=

.PHONY: all deps build model serve run test test-unit test-asan fuzz clean

all: build

deps:
	@tools/setup_deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=$$(command -v $(PYTHON))

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

model:
	@$(PYTHON) tools/fetch_model.py >/dev/null

# The main job: build, fetch the default model, serve it (OpenAI API + web page on 127.0.0.1:8080).
PORT ?= 8080
serve: build model
	$(BUILD)/ridge serve --port $(PORT) $(RIDGE_ARGS)

# One prompt, streamed to the terminal.
run: build model
	$(BUILD)/ridge run -p "$(PROMPT)" $(RIDGE_ARGS)

# Everything: unit tests, sanitizer build of the unit tests, conformance against llama.cpp.
test: build model
	@tools/setup_test_deps.sh
	$(MAKE) test-asan
	cd $(BUILD) && ctest --output-on-failure -j 2

test-unit: build
	cd $(BUILD) && ctest --output-on-failure -L unit -j $(JOBS)

$(BUILD_ASAN)/build.ninja:
	cmake -S . -B $(BUILD_ASAN) -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRIDGE_SANITIZE=ON -DRIDGE_CONFORMANCE=OFF

test-asan: deps $(BUILD_ASAN)/build.ninja
	cmake --build $(BUILD_ASAN) -j $(JOBS) --target ridge_tests ridge ridge_fuzz_replay
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -L unit -j $(JOBS)

# libFuzzer (clang): builds every fuzz target, then runs each for FUZZ_SECONDS from its corpus
# fuzz/corpus/<target> with its dictionary fuzz/<target>.dict; new finds go to
# build-fuzz/corpus-new/<target>, crashes to build-fuzz/artifacts/<target>/. FUZZ_TARGETS picks some.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= gguf_fuzz openai_request_fuzz grammar_fuzz reasoning_fuzz chat_template_fuzz safetensors_fuzz kv_tier_fuzz kv_transfer_fuzz tokenizer_fuzz tokenizer_json_fuzz embedding_files_fuzz
fuzz: deps
	@tools/setup_fuzz_deps.sh
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DRIDGE_FUZZ=ON -DBUILD_TESTING=OFF
	cmake --build build-fuzz -j $(JOBS) --target $(FUZZ_TARGETS)
	@failed=; for t in $(FUZZ_TARGETS); do \
	  mkdir -p build-fuzz/corpus-new/$$t build-fuzz/artifacts/$$t; \
	  dict=; if [ -f fuzz/$$t.dict ]; then dict=-dict=fuzz/$$t.dict; fi; \
	  echo "== $$t ($(FUZZ_SECONDS) s)"; \
	  build-fuzz/fuzz/$$t -max_total_time=$(FUZZ_SECONDS) -max_len=4096 -timeout=10 $$dict \
	    -artifact_prefix=build-fuzz/artifacts/$$t/ build-fuzz/corpus-new/$$t fuzz/corpus/$$t || failed="$$failed $$t"; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz: crashes in$$failed (inputs under build-fuzz/artifacts/)"; exit 1; fi

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-fuzz
