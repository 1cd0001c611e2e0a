#pragma once
// The requests of one run, built before it starts so that every run with the same seed sends the
// same prompts: synthetic text of sampled lengths, or prompts replayed from a dataset, some of them
// opened by one shared prefix (to exercise a server's prefix cache).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "loadgen/length_dist.h"

namespace ridge::loadgen {

struct RequestSpec {
  std::string prefix;    // the shared prefix (a system message on the chat endpoint), or empty
  std::string prompt;    // the rest of the prompt
  int input_tokens = 0;  // estimated; the server's usage figure replaces it when it reports one
  int max_tokens = 1;
};

struct WorkloadOptions {
  LengthDist input_len = LengthDist::fixed(256);
  LengthDist output_len = LengthDist::fixed(128);
  bool output_len_given = false;  // with a dataset: use output_len instead of the recorded lengths
  std::string dataset;            // JSONL / JSON file; empty = synthetic prompts
  double shared_prefix_fraction = 0;
  int shared_prefix_len = 0;  // tokens, counted inside the input length
  uint64_t seed = 0;
};

// `words` random common English words (about one token each in BPE vocabularies).
std::string synth_text(std::mt19937_64& rng, int words);

std::vector<RequestSpec> build_workload(const WorkloadOptions& options, int count);

}  // namespace ridge::loadgen
