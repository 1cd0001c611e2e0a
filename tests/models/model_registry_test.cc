#include "models/model_registry.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "fake_served_model.h"

namespace ridge::testing {
namespace {

using models::ModelError;
using models::ModelRegistry;
using models::ModelState;

TEST(ModelRegistry, LoadsOnFirstRequestOnceForConcurrentRequests) {
  FakeModels fake;
  fake.load_delay = std::chrono::milliseconds(50);
  ModelRegistry r(sources({"a", "b"}), {}, fake.loader(), fake.estimator());
  EXPECT_EQ(status_of(r, "a").state, ModelState::kUnloaded);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int i = 0; i < 24; ++i)
    threads.emplace_back([&] {
      auto lease = r.acquire("a");
      if (lease && lease->name() == "a") ++ok;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok, 24);
  EXPECT_EQ(fake.loads_of("a"), 1);
  EXPECT_EQ(status_of(r, "a").state, ModelState::kLoaded);
  EXPECT_EQ(status_of(r, "a").loads, 1);
  EXPECT_EQ(status_of(r, "b").state, ModelState::kUnloaded);
}

TEST(ModelRegistry, UnknownNamesAndAliases) {
  FakeModels fake;
  auto s = sources({"a"});
  s[0].aliases = {"first"};
  ModelRegistry r(s, {}, fake.loader(), fake.estimator());
  EXPECT_EQ(r.resolve("first"), "a");
  EXPECT_EQ(r.acquire("first")->name(), "a");
  try {
    r.acquire("../../etc/passwd");
    FAIL() << "no error";
  } catch (const ModelError& e) {
    EXPECT_EQ(e.kind, ModelError::Kind::kNotFound);
  }
}

TEST(ModelRegistry, FailedLoadIsReportedUntilLoadedAgain) {
  FakeModels fake;
  fake.broken = "bad";
  ModelRegistry r(sources({"good", "bad"}), {}, fake.loader(), fake.estimator());
  try {
    r.acquire("bad");
    FAIL() << "no error";
  } catch (const ModelError& e) {
    EXPECT_EQ(e.kind, ModelError::Kind::kLoadFailed);
    EXPECT_NE(std::string(e.what()).find("not a GGUF file"), std::string::npos) << e.what();
  }
  const auto st = status_of(r, "bad");
  EXPECT_EQ(st.state, ModelState::kFailed);
  EXPECT_NE(st.error.find("not a GGUF file"), std::string::npos);
  EXPECT_EQ(st.failures, 1);
  EXPECT_THROW(r.acquire("bad"), ModelError);  // sticky: not loaded again per request
  EXPECT_EQ(status_of(r, "bad").failures, 1);
  EXPECT_TRUE(r.acquire("good"));  // the others never notice
  fake.broken.clear();
  r.load("bad");  // asked explicitly: tried again
  EXPECT_EQ(status_of(r, "bad").state, ModelState::kLoaded);
}

TEST(ModelRegistry, MaxLoadedUnloadsTheLeastRecentlyUsedIdleModel) {
  FakeModels fake;
  models::RegistryOptions o;
  o.max_loaded = 2;
  ModelRegistry r(sources({"a", "b", "c"}), o, fake.loader(), fake.estimator());
  r.acquire("a");
  r.acquire("b");
  r.acquire("a");  // b is now the least recently used
  r.acquire("c");
  EXPECT_EQ(status_of(r, "a").state, ModelState::kLoaded);
  EXPECT_EQ(status_of(r, "b").state, ModelState::kUnloaded);
  EXPECT_EQ(status_of(r, "b").evictions, 1);
  EXPECT_EQ(status_of(r, "c").state, ModelState::kLoaded);
  EXPECT_TRUE(eventually([&] { return fake.alive == 2; }));
}

TEST(ModelRegistry, ABusyModelDrainsInsteadOfUnloading) {
  FakeModels fake;
  models::RegistryOptions o;
  o.max_loaded = 2;
  ModelRegistry r(sources({"a", "b", "c"}), o, fake.loader(), fake.estimator());
  auto a = r.acquire("a");
  auto b = r.acquire("b");
  std::shared_ptr<ModelRegistry::Lease> c;
  std::thread t([&] { c = r.acquire("c"); });
  ASSERT_TRUE(eventually([&] { return status_of(r, "a").state == ModelState::kDraining; }));
  EXPECT_EQ(status_of(r, "c").state, ModelState::kLoading);
  EXPECT_EQ(fake.alive, 2);  // a still serves its request
  a.reset();                 // its request ends: it unloads and c loads
  t.join();
  ASSERT_TRUE(c);
  EXPECT_EQ(status_of(r, "a").state, ModelState::kUnloaded);
  EXPECT_EQ(status_of(r, "c").state, ModelState::kLoaded);
  EXPECT_EQ(status_of(r, "b").state, ModelState::kLoaded);
  EXPECT_TRUE(eventually([&] { return fake.alive == 2; }));
}

TEST(ModelRegistry, MemoryBudget) {
  FakeModels fake;
  fake.bytes = {{"a", 600}, {"b", 600}, {"huge", 5000}};
  models::RegistryOptions o;
  o.memory_budget = 1000;
  ModelRegistry r(sources({"a", "b", "huge"}), o, fake.loader(), fake.estimator());
  r.acquire("a");
  r.acquire("b");  // 1200 > 1000: a goes
  EXPECT_EQ(status_of(r, "a").state, ModelState::kUnloaded);
  try {
    r.acquire("huge");
    FAIL() << "no error";
  } catch (const ModelError& e) {
    EXPECT_EQ(e.kind, ModelError::Kind::kOverBudget);
    const std::string what = e.what();
    EXPECT_NE(what.find("5000 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("1000 bytes"), std::string::npos) << what;
  }
  EXPECT_EQ(status_of(r, "b").state, ModelState::kLoaded);  // nothing was unloaded for it
}

TEST(ModelRegistry, KeepAliveAndIdleUnload) {
  FakeModels fake;
  models::RegistryOptions o;
  o.idle_unload_seconds = 0.05;
  ModelRegistry r(sources({"a", "b"}), o, fake.loader(), fake.estimator());
  {
    auto lease = r.acquire("a");
    lease->set_keep_alive(0);  // unload as soon as this request ends
  }
  EXPECT_TRUE(eventually([&] { return status_of(r, "a").state == ModelState::kUnloaded; }));
  {
    auto lease = r.acquire("b");
    lease->set_keep_alive(-1);  // never on idle
  }
  r.acquire("a");  // idle unload after 50 ms
  EXPECT_TRUE(eventually([&] { return status_of(r, "a").state == ModelState::kUnloaded; }));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(status_of(r, "b").state, ModelState::kLoaded);
}

TEST(ModelRegistry, LoadTimeout) {
  FakeModels fake;
  fake.load_delay = std::chrono::milliseconds(400);
  models::RegistryOptions o;
  o.load_timeout = std::chrono::milliseconds(50);
  ModelRegistry r(sources({"slow"}), o, fake.loader(), fake.estimator());
  try {
    r.acquire("slow");
    FAIL() << "no error";
  } catch (const ModelError& e) {
    EXPECT_EQ(e.kind, ModelError::Kind::kLoadTimeout);
  }
  EXPECT_TRUE(eventually([&] { return status_of(r, "slow").state == ModelState::kLoaded; }));  // the load goes on
}

TEST(ModelRegistry, ExplicitUnloadWaitsForRequestsInFlight) {
  FakeModels fake;
  ModelRegistry r(sources({"a"}), {}, fake.loader(), fake.estimator());
  EXPECT_THROW(r.unload("a"), ModelError);  // not loaded
  auto lease = r.acquire("a");
  EXPECT_EQ(r.unload("a"), 1);
  EXPECT_EQ(status_of(r, "a").state, ModelState::kDraining);
  EXPECT_EQ(fake.alive, 1);
  lease.reset();
  EXPECT_EQ(status_of(r, "a").state, ModelState::kUnloaded);
  EXPECT_TRUE(eventually([&] { return fake.alive == 0; }));
  r.acquire("a");
  EXPECT_EQ(r.unload("a"), 0);
  EXPECT_EQ(status_of(r, "a").unloads, 2);
}

TEST(ModelRegistry, PeekNeitherLoadsNorTouchesTheOrder) {
  FakeModels fake;
  models::RegistryOptions o;
  o.max_loaded = 2;
  ModelRegistry r(sources({"a", "b", "c"}), o, fake.loader(), fake.estimator());
  EXPECT_FALSE(r.peek("a"));
  EXPECT_EQ(status_of(r, "a").state, ModelState::kUnloaded);
  r.acquire("a");
  r.acquire("b");
  EXPECT_TRUE(r.peek("a"));  // a stays the least recently used
  r.acquire("c");
  EXPECT_EQ(status_of(r, "a").state, ModelState::kUnloaded);
  EXPECT_EQ(status_of(r, "b").state, ModelState::kLoaded);
}

}  // namespace
}  // namespace ridge::testing
