#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

namespace ridge {
namespace {

std::vector<int32_t> iota_tokens(int64_t n, int32_t start = 0) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), start);
  return v;
}

// A stand-in for the model: the token sampled at a position depends only on the request and the
// position, as greedy decoding of a fixed prompt does. So a recomputed request samples the same.
int32_t model_token(RequestId id, int64_t position) { return static_cast<int32_t>((id * 7919 + position * 31) % 1000); }

// Checks what every plan must satisfy, then "runs" it: every sampling request gets its token.
std::vector<FinishedRequest> run_step(Scheduler& s, const KvManager& kv, const SchedulerConfig& config, const StepPlan& plan,
                                      const std::set<RequestId>& finish_now = {}) {
  EXPECT_LE(plan.n_tokens, config.max_batched_tokens);
  EXPECT_LE(static_cast<int64_t>(plan.requests.size()), config.max_num_seqs);
  EXPECT_LE(s.counters().running, config.max_num_seqs);
  int64_t sum = 0;
  std::set<RequestId> seen;
  std::vector<SampledToken> sampled;
  for (const ScheduledRequest& r : plan.requests) {
    EXPECT_TRUE(seen.insert(r.id).second) << "request " << r.id << " twice in one step";
    EXPECT_GT(r.n_tokens, 0);
    sum += r.n_tokens;
    // The block table covers exactly the positions computed so far plus this step's.
    EXPECT_EQ(kv.n_slots(r.id), r.first_position + r.n_tokens);
    EXPECT_EQ(static_cast<int64_t>(kv.block_table(r.id).size()),
              (r.first_position + r.n_tokens + kv.block_size() - 1) / kv.block_size());
    const int64_t end = r.first_position + r.n_tokens;
    EXPECT_EQ(r.samples, end == static_cast<int64_t>(s.tokens(r.id).size()));
    if (r.samples) sampled.push_back({r.id, model_token(r.id, end), finish_now.contains(r.id)});
  }
  EXPECT_EQ(sum, plan.n_tokens);
  return s.on_step_done(sampled);
}

struct Fixture {
  SchedulerConfig config;
  KvManager kv;
  Scheduler sched;
  Fixture(SchedulerConfig c, KvConfig k) : config(c), kv(k), sched(config, kv) {}

  // Steps until nothing is left; returns each request's output.
  std::map<RequestId, std::vector<int32_t>> drain(int max_steps = 100000) {
    std::map<RequestId, std::vector<int32_t>> out;
    for (int i = 0; i < max_steps && sched.has_work(); ++i) {
      for (FinishedRequest& f : run_step(sched, kv, config, sched.schedule())) out[f.id] = std::move(f.output);
    }
    EXPECT_FALSE(sched.has_work());
    return out;
  }
};

std::vector<int32_t> expected_output(RequestId id, int64_t prompt_len, int64_t n) {
  std::vector<int32_t> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(model_token(id, prompt_len + i));
  return v;
}

TEST(Scheduler, OneRequestPrefillsThenDecodesOneTokenPerStep) {
  Fixture f({.max_batched_tokens = 64, .max_num_seqs = 4}, {.n_blocks = 16, .block_size = 4});
  f.sched.add({.id = 1, .prompt = iota_tokens(10), .max_new_tokens = 3});
  StepPlan p = f.sched.schedule();
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].first_position, 0);
  EXPECT_EQ(p.requests[0].n_tokens, 10);
  EXPECT_TRUE(p.requests[0].samples);
  run_step(f.sched, f.kv, f.config, p);
  p = f.sched.schedule();
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].first_position, 10);
  EXPECT_EQ(p.requests[0].n_tokens, 1);
  run_step(f.sched, f.kv, f.config, p);
  auto out = f.drain();
  EXPECT_EQ(out[1], expected_output(1, 10, 3));
  SchedulerCounters c = f.sched.counters();
  EXPECT_EQ(c.tokens_prefilled, 10);
  EXPECT_EQ(c.tokens_decoded, 2);  // the third token is sampled but never fed back
  EXPECT_EQ(c.blocks_free, 16);
}

TEST(Scheduler, ChunkedPrefillKeepsTheBudgetAndNeverStarvesDecodes) {
  Fixture f({.max_batched_tokens = 16, .max_num_seqs = 8}, {.n_blocks = 128, .block_size = 4});
  for (RequestId id = 1; id <= 3; ++id) f.sched.add({.id = id, .prompt = iota_tokens(4, 100), .max_new_tokens = 50});
  run_step(f.sched, f.kv, f.config, f.sched.schedule());  // three short prefills
  f.sched.add({.id = 9, .prompt = iota_tokens(200), .max_new_tokens = 2});
  int64_t long_done = 0;
  for (int step = 0; step < 20 && long_done < 200; ++step) {
    StepPlan p = f.sched.schedule();
    EXPECT_LE(p.n_tokens, 16);
    std::set<RequestId> decodes;
    for (const ScheduledRequest& r : p.requests) {
      if (r.id == 9) {
        EXPECT_EQ(r.first_position, long_done);
        EXPECT_EQ(r.n_tokens, std::min<int64_t>(13, 200 - long_done));  // what the decodes leave
        long_done += r.n_tokens;
      } else {
        EXPECT_EQ(r.n_tokens, 1);
        decodes.insert(r.id);
      }
    }
    EXPECT_EQ(decodes.size(), 3u) << "a running decode waited behind the long prompt";
    EXPECT_EQ(p.requests.front().n_tokens, 1);  // decodes come first
    run_step(f.sched, f.kv, f.config, p);
  }
  EXPECT_EQ(long_done, 200);
  auto out = f.drain();
  EXPECT_EQ(out[9], expected_output(9, 200, 2));
  EXPECT_EQ(out[2], expected_output(2, 4, 50));
}

TEST(Scheduler, PrefillChunkWhileDecodingBoundsTheStep) {
  Fixture f({.max_batched_tokens = 64, .prefill_tokens_while_decoding = 8, .max_num_seqs = 8},
            {.n_blocks = 128, .block_size = 4});
  f.sched.add({.id = 9, .prompt = iota_tokens(100), .max_new_tokens = 2});
  StepPlan p = f.sched.schedule();  // nothing decodes yet: the whole budget goes to the prompt
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].n_tokens, 64);
  run_step(f.sched, f.kv, f.config, p);
  f.sched.abort(9);
  for (RequestId id = 1; id <= 3; ++id) f.sched.add({.id = id, .prompt = iota_tokens(4, 100), .max_new_tokens = 40});
  run_step(f.sched, f.kv, f.config, f.sched.schedule());  // three short prefills
  f.sched.add({.id = 10, .prompt = iota_tokens(100, 500), .max_new_tokens = 2});  // no prefix shared with 9
  int64_t long_done = 0;
  for (int step = 0; step < 30 && long_done < 100; ++step) {
    p = f.sched.schedule();
    int64_t decodes = 0;
    for (const ScheduledRequest& r : p.requests) {
      if (r.id != 10) {
        ++decodes;
        continue;
      }
      EXPECT_EQ(r.n_tokens, std::min<int64_t>(8, 100 - long_done)) << "step " << step;
      long_done += r.n_tokens;
    }
    EXPECT_EQ(decodes, 3);
    run_step(f.sched, f.kv, f.config, p);
  }
  EXPECT_EQ(long_done, 100);
  f.drain();
  EXPECT_EQ(f.sched.counters().blocks_free, 128);
}

TEST(Scheduler, PrefixHitsSkipTheCachedPart) {
  Fixture f({.max_batched_tokens = 256, .max_num_seqs = 4}, {.n_blocks = 64, .block_size = 16});
  std::vector<int32_t> system = iota_tokens(48, 500);  // three full blocks
  std::vector<int32_t> a = system;
  a.insert(a.end(), {1, 2, 3});
  f.sched.add({.id = 1, .prompt = a, .max_new_tokens = 2});
  f.drain();
  std::vector<int32_t> b = system;
  b.insert(b.end(), {7, 8, 9, 10});
  f.sched.add({.id = 2, .prompt = b, .max_new_tokens = 2});
  StepPlan p = f.sched.schedule();
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].first_position, 48);
  EXPECT_EQ(p.requests[0].n_tokens, 4);
  run_step(f.sched, f.kv, f.config, p);
  auto out = f.drain();
  EXPECT_EQ(out[2], expected_output(2, 52, 2));
  SchedulerCounters c = f.sched.counters();
  EXPECT_EQ(c.prefix_hit_tokens, 48);
  EXPECT_EQ(c.prefix_query_tokens, 48 + 48);
  EXPECT_EQ(c.tokens_prefilled, 51 + 4);
}

TEST(Scheduler, PreemptsTheNewestWhenThePoolIsShortAndItCompletesLater) {
  // 6 blocks of 4 tokens; each request needs 8 + 9 = 17 positions (5 blocks) by its end.
  Fixture f({.max_batched_tokens = 64, .max_num_seqs = 4}, {.n_blocks = 6, .block_size = 4});
  f.sched.add({.id = 1, .prompt = iota_tokens(8), .max_new_tokens = 10});
  f.sched.add({.id = 2, .prompt = iota_tokens(8, 50), .max_new_tokens = 10});
  bool saw_preemption = false;
  std::map<RequestId, std::vector<int32_t>> out;
  for (int step = 0; step < 200 && f.sched.has_work(); ++step) {
    StepPlan p = f.sched.schedule();
    for (RequestId id : p.preempted) {
      EXPECT_EQ(id, 2);  // the newest goes, the oldest keeps running
      saw_preemption = true;
    }
    for (FinishedRequest& r : run_step(f.sched, f.kv, f.config, p)) out[r.id] = std::move(r.output);
  }
  EXPECT_TRUE(saw_preemption);
  EXPECT_GE(f.sched.counters().preemptions, 1);
  EXPECT_EQ(out[1], expected_output(1, 8, 10));
  EXPECT_EQ(out[2], expected_output(2, 8, 10));  // recomputed, same tokens
  EXPECT_EQ(f.kv.n_free_blocks(), 6);
}

TEST(Scheduler, RespectsTheSequenceCapAndAdmitsInArrivalOrder) {
  Fixture f({.max_batched_tokens = 1000, .max_num_seqs = 2}, {.n_blocks = 64, .block_size = 4});
  for (RequestId id = 1; id <= 5; ++id) f.sched.add({.id = id, .prompt = iota_tokens(5), .max_new_tokens = 3});
  StepPlan p = f.sched.schedule();
  ASSERT_EQ(p.requests.size(), 2u);
  EXPECT_EQ(p.requests[0].id, 1);
  EXPECT_EQ(p.requests[1].id, 2);
  EXPECT_EQ(f.sched.counters().waiting, 3);
  run_step(f.sched, f.kv, f.config, p);
  f.drain();
}

TEST(Scheduler, PrioritiesOrderAdmissionWhenOn) {
  Fixture f({.max_batched_tokens = 1000, .max_num_seqs = 1, .priorities = true}, {.n_blocks = 64, .block_size = 4});
  f.sched.add({.id = 1, .prompt = iota_tokens(5), .max_new_tokens = 1, .priority = 5});
  f.sched.add({.id = 2, .prompt = iota_tokens(5), .max_new_tokens = 1, .priority = 0});
  StepPlan p = f.sched.schedule();
  ASSERT_EQ(p.requests.size(), 1u);
  EXPECT_EQ(p.requests[0].id, 2);
  run_step(f.sched, f.kv, f.config, p);
  f.drain();
}

TEST(Scheduler, RejectsARequestThePoolCanNeverHold) {
  KvManager kv({.n_blocks = 4, .block_size = 4});
  Scheduler s({}, kv);
  EXPECT_THROW(s.add({.id = 1, .prompt = iota_tokens(10), .max_new_tokens = 8}), std::invalid_argument);  // 17 positions
  EXPECT_NO_THROW(s.add({.id = 2, .prompt = iota_tokens(10), .max_new_tokens = 7}));                     // 16 positions
}

TEST(Scheduler, AbortFreesEverything) {
  Fixture f({.max_batched_tokens = 8, .max_num_seqs = 4}, {.n_blocks = 16, .block_size = 4});
  f.sched.add({.id = 1, .prompt = iota_tokens(20), .max_new_tokens = 4});
  f.sched.add({.id = 2, .prompt = iota_tokens(4), .max_new_tokens = 4});
  run_step(f.sched, f.kv, f.config, f.sched.schedule());
  f.sched.abort(1);
  f.sched.abort(2);
  EXPECT_FALSE(f.sched.has_work());
  EXPECT_EQ(f.kv.n_free_blocks(), 16);
}

// Thousands of random requests (shared system prompts, random lengths, random early finishes and
// cancellations) through a small pool: every plan keeps the limits, first admissions follow
// arrival order, and when all is done every block is free.
TEST(Scheduler, LongRandomSimulationLeaksNoBlocks) {
  SchedulerConfig config{.max_batched_tokens = 96, .max_num_seqs = 12};
  KvManager kv({.n_blocks = 48, .block_size = 8});
  Scheduler s(config, kv);
  std::mt19937 rng(1234);
  std::vector<std::vector<int32_t>> systems;
  for (int i = 0; i < 4; ++i) systems.push_back(iota_tokens(8 + 8 * i + static_cast<int>(rng() % 8), 1000 * (i + 1)));

  const RequestId n_requests = 3000;
  RequestId next_id = 0;
  std::set<RequestId> live, admitted;
  RequestId last_first_admitted = -1;
  int64_t finished = 0, aborted = 0;
  for (int step = 0; step < 200000 && (next_id < n_requests || s.has_work()); ++step) {
    for (int k = static_cast<int>(rng() % 3); k > 0 && next_id < n_requests; --k) {
      std::vector<int32_t> prompt;
      if (rng() % 2) prompt = systems[rng() % systems.size()];
      for (int64_t t = 1 + static_cast<int64_t>(rng() % 60); t > 0; --t) prompt.push_back(static_cast<int32_t>(rng() % 500));
      s.add({.id = next_id, .prompt = prompt, .max_new_tokens = 1 + static_cast<int64_t>(rng() % 40)});
      live.insert(next_id++);
    }
    if (!live.empty() && rng() % 50 == 0) {  // a client goes away
      RequestId victim = *std::next(live.begin(), static_cast<long>(rng() % live.size()));
      s.abort(victim);
      live.erase(victim);
      ++aborted;
    }
    StepPlan p = s.schedule();
    std::set<RequestId> finish_now;
    for (const ScheduledRequest& r : p.requests) {
      if (admitted.insert(r.id).second) {
        EXPECT_GT(r.id, last_first_admitted) << "admitted out of arrival order";
        last_first_admitted = r.id;
      }
      if (r.samples && rng() % 20 == 0) finish_now.insert(r.id);
    }
    for (const FinishedRequest& f : run_step(s, kv, config, p, finish_now)) {
      EXPECT_TRUE(live.erase(f.id));
      ++finished;
    }
    SchedulerCounters c = s.counters();
    ASSERT_EQ(c.blocks_used + c.blocks_free, kv.n_blocks());
    for (BlockId b = 0; b < kv.n_blocks(); ++b) ASSERT_GE(kv.pool().ref_count(b), 0);
  }
  EXPECT_TRUE(live.empty());
  EXPECT_EQ(finished + aborted, n_requests);
  SchedulerCounters c = s.counters();
  EXPECT_EQ(c.running, 0);
  EXPECT_EQ(c.waiting, 0);
  EXPECT_EQ(c.blocks_free, kv.n_blocks());
  EXPECT_GT(c.prefix_hit_tokens, 0);
  EXPECT_GT(c.preemptions, 0);  // the pool is small enough to force some
  EXPECT_GT(c.evictions, 0);
  for (BlockId b = 0; b < kv.n_blocks(); ++b) EXPECT_EQ(kv.pool().ref_count(b), 0);
}

}  // namespace
}  // namespace ridge
