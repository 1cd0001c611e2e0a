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
	cmake --build $(BUILD_ASAN) -j $(JOBS) --target ridge_tests ridge
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -L unit -j $(JOBS)

# libFuzzer on the GGUF parser (clang): FUZZ_SECONDS of fuzzing, new finds under build-fuzz/corpus-new.
FUZZ_SECONDS ?= 300
fuzz:
	cmake -S . -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DRIDGE_FUZZ=ON -DBUILD_TESTING=OFF
	cmake --build build-fuzz --target gguf_fuzz
	mkdir -p build-fuzz/corpus-new
	build-fuzz/fuzz/gguf_fuzz -max_total_time=$(FUZZ_SECONDS) -max_len=4096 build-fuzz/corpus-new fuzz/corpus

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) build-fuzz
