// The fuzz targets without libFuzzer (any compiler): `ridge_fuzz_replay TARGET [--seconds N]
// [--seed S] [--dict FILE] PATH...` runs every input under the PATHs (files, or folders read
// recursively), then mutates them at random for N seconds (bit flips, byte changes, insertions,
// deletions, repeats, dictionary words, splices) and runs those too. No coverage guides it, so it
// finds far less than libFuzzer (`make fuzz`); its job is to keep every saved input and the code
// near it under the sanitizers in every test run (the unit tests of the sanitizer build run it).
// A crash writes the input to ./fuzz-crash-TARGET before the process dies.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#define RIDGE_FUZZ_TARGETS(X) \
  X(gguf)                     \
  X(openai_request)           \
  X(grammar)                  \
  X(reasoning)                \
  X(chat_template)            \
  X(safetensors)              \
  X(kv_tier)                  \
  X(kv_transfer)              \
  X(tokenizer)                \
  X(embedding_files)

#define RIDGE_DECLARE(name) extern "C" int ridge_fuzz_##name(const uint8_t* data, size_t size);
RIDGE_FUZZ_TARGETS(RIDGE_DECLARE)
#undef RIDGE_DECLARE

extern "C" void __sanitizer_set_death_callback(void (*callback)()) __attribute__((weak));

namespace {

using Entry = int (*)(const uint8_t*, size_t);
using Bytes = std::vector<uint8_t>;

struct Target {
  const char* name;
  Entry run;
};

constexpr Target kTargets[] = {
#define RIDGE_ENTRY(name) {#name "_fuzz", ridge_fuzz_##name},
    RIDGE_FUZZ_TARGETS(RIDGE_ENTRY)
#undef RIDGE_ENTRY
};

constexpr size_t kMaxLen = 4096;  // as `make fuzz` runs libFuzzer

// The input being run, for the crash handlers (only async-signal-safe calls there).
const uint8_t* g_input = nullptr;
size_t g_input_size = 0;
char g_crash_path[256] = "fuzz-crash";

void save_input() {
  const int fd = ::open(g_crash_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return;
  for (size_t done = 0; done < g_input_size;) {
    const ssize_t n = ::write(fd, g_input + done, g_input_size - done);
    if (n <= 0) break;
    done += size_t(n);
  }
  ::close(fd);
  static const char kSaid[] = "ridge_fuzz_replay: the input that crashed is in ";
  [[maybe_unused]] ssize_t w = ::write(2, kSaid, sizeof kSaid - 1);
  w = ::write(2, g_crash_path, std::strlen(g_crash_path));
  w = ::write(2, "\n", 1);
}

void on_signal(int sig) {
  save_input();
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

int run(Entry entry, const Bytes& input) {
  g_input = input.data();
  g_input_size = input.size();
  return entry(input.data(), input.size());
}

// A libFuzzer dictionary: one "quoted" word a line (optionally name=), with \\, \" and \xNN escapes.
std::vector<Bytes> read_dictionary(const std::string& path) {
  std::vector<Bytes> words;
  std::ifstream f(path);
  std::string line;
  auto hex = [](char c) { return c <= '9' ? c - '0' : (c | 32) - 'a' + 10; };
  while (std::getline(f, line)) {
    const size_t open = line.find('"'), close = line.rfind('"');
    if (line.empty() || line[0] == '#' || open == std::string::npos || close <= open) continue;
    Bytes word;
    for (size_t i = open + 1; i < close; ++i) {
      if (line[i] != '\\' || i + 1 >= close) {
        word.push_back(uint8_t(line[i]));
      } else if (line[i + 1] == 'x' && i + 3 < close) {
        word.push_back(uint8_t(hex(line[i + 2]) * 16 + hex(line[i + 3])));
        i += 3;
      } else {
        word.push_back(uint8_t(line[++i]));
      }
    }
    if (!word.empty()) words.push_back(std::move(word));
  }
  return words;
}

void read_inputs(const std::filesystem::path& path, std::vector<Bytes>& out) {
  namespace fs = std::filesystem;
  auto read_one = [&](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    out.emplace_back((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  if (fs::is_directory(path)) {
    std::vector<fs::path> files;
    for (const auto& e : fs::recursive_directory_iterator(path))
      if (e.is_regular_file()) files.push_back(e.path());
    std::sort(files.begin(), files.end());  // the same order every run
    for (const fs::path& p : files) read_one(p);
  } else {
    read_one(path);
  }
}

class Mutator {
 public:
  Mutator(uint64_t seed, std::vector<Bytes> dictionary) : rng_(seed), dictionary_(std::move(dictionary)) {}

  Bytes mutate(const std::vector<Bytes>& corpus) {
    Bytes b = corpus.empty() ? Bytes{} : corpus[below(corpus.size())];
    const size_t n = 1 + below(4);
    for (size_t i = 0; i < n; ++i) once(b, corpus);
    if (b.size() > kMaxLen) b.resize(kMaxLen);
    return b;
  }

 private:
  size_t below(size_t n) { return n == 0 ? 0 : size_t(rng_() % n); }

  void once(Bytes& b, const std::vector<Bytes>& corpus) {
    switch (below(8)) {
      case 0:  // flip a bit
        if (!b.empty()) b[below(b.size())] ^= uint8_t(1u << below(8));
        break;
      case 1:  // a byte, often an interesting one
        if (!b.empty()) {
          static constexpr uint8_t kInteresting[] = {0, 1, 0x7f, 0x80, 0xff, '"', '\\', '{', '}', '[', ']', ':', ',', '<', '>', '\n'};
          b[below(b.size())] = below(2) ? kInteresting[below(sizeof kInteresting)] : uint8_t(rng_());
        }
        break;
      case 2: {  // insert random bytes
        const size_t at = below(b.size() + 1), k = 1 + below(8);
        for (size_t i = 0; i < k; ++i) b.insert(b.begin() + std::ptrdiff_t(at), uint8_t(rng_()));
        break;
      }
      case 3:  // delete a range
        if (!b.empty()) {
          const size_t at = below(b.size()), k = 1 + below(std::min<size_t>(b.size() - at, 64));
          b.erase(b.begin() + std::ptrdiff_t(at), b.begin() + std::ptrdiff_t(at + k));
        }
        break;
      case 4:  // repeat a range
        if (!b.empty()) {
          const size_t at = below(b.size()), k = 1 + below(std::min<size_t>(b.size() - at, 32));
          const Bytes piece(b.begin() + std::ptrdiff_t(at), b.begin() + std::ptrdiff_t(at + k));
          const size_t times = 1 + below(8);
          for (size_t t = 0; t < times; ++t) b.insert(b.begin() + std::ptrdiff_t(at), piece.begin(), piece.end());
        }
        break;
      case 5:
      case 6:  // a dictionary word, inserted or written over
        if (!dictionary_.empty()) {
          const Bytes& w = dictionary_[below(dictionary_.size())];
          const size_t at = below(b.size() + 1);
          if (below(2) || at + w.size() > b.size())
            b.insert(b.begin() + std::ptrdiff_t(at), w.begin(), w.end());
          else
            std::copy(w.begin(), w.end(), b.begin() + std::ptrdiff_t(at));
        }
        break;
      default:  // splice: this input's head, another's tail
        if (!corpus.empty()) {
          const Bytes& other = corpus[below(corpus.size())];
          b.resize(below(b.size() + 1));
          const size_t from = below(other.size() + 1);
          b.insert(b.end(), other.begin() + std::ptrdiff_t(from), other.end());
        }
        break;
    }
  }

  std::mt19937_64 rng_;
  std::vector<Bytes> dictionary_;
};

int usage() {
  std::fprintf(stderr, "usage: ridge_fuzz_replay TARGET [--seconds N] [--seed S] [--dict FILE] PATH...\ntargets:");
  for (const Target& t : kTargets) std::fprintf(stderr, " %s", t.name);
  std::fprintf(stderr, "\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage();
  const Target* target = nullptr;
  for (const Target& t : kTargets)
    if (std::string_view(argv[1]) == t.name) target = &t;
  if (!target) return usage();
  double seconds = 0;
  uint64_t seed = uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  std::vector<Bytes> corpus, dictionary;
  for (int i = 2; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--seconds" && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--seed" && i + 1 < argc) {
      seed = std::strtoull(argv[++i], nullptr, 10);
    } else if (a == "--dict" && i + 1 < argc) {
      dictionary = read_dictionary(argv[++i]);
    } else if (!std::filesystem::exists(a)) {
      std::fprintf(stderr, "ridge_fuzz_replay: %s does not exist\n", argv[i]);
      return 2;
    } else {
      read_inputs(argv[i], corpus);
    }
  }
  std::snprintf(g_crash_path, sizeof g_crash_path, "fuzz-crash-%s", target->name);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(save_input);
  for (int sig : {SIGSEGV, SIGILL, SIGABRT, SIGFPE, SIGBUS}) ::signal(sig, on_signal);

  for (const Bytes& input : corpus) run(target->run, input);
  std::printf("%s: %zu saved inputs passed\n", target->name, corpus.size());
  if (seconds <= 0) return 0;
  Mutator mutator(seed, std::move(dictionary));
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  int64_t runs = 0;
  while (std::chrono::steady_clock::now() < end) {
    for (int i = 0; i < 64; ++i, ++runs) run(target->run, mutator.mutate(corpus));
  }
  std::printf("%s: %lld mutated inputs passed in %.0f s (seed %llu)\n", target->name, (long long)runs, seconds,
              (unsigned long long)seed);
  return 0;
}
