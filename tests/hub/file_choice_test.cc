#include "hub/file_choice.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace ridge::testing {
namespace {

using hub::choose_files;
using hub::parse_repo_ref;
using Files = std::vector<std::string>;

const Files kGgufRepo = {
    ".gitattributes",
    "README.md",
    "Model-Q2_K.gguf",
    "Model-Q4_K_M.gguf",
    "Model-Q4_K_S.gguf",
    "Model-q8_0.gguf",
    "mmproj-Model-Q4_K_M.gguf",
    "Big/Model-F16-00001-of-00002.gguf",
    "Big/Model-F16-00002-of-00002.gguf",
};

TEST(FileChoice, QuantTagsAsLlamaCppPicksThem) {
  EXPECT_EQ(choose_files(kGgufRepo, parse_repo_ref("o/r")).model_file, "Model-Q4_K_M.gguf");  // the default
  EXPECT_EQ(choose_files(kGgufRepo, parse_repo_ref("o/r:q4_k_s")).model_file, "Model-Q4_K_S.gguf");
  EXPECT_EQ(choose_files(kGgufRepo, parse_repo_ref("o/r:Q8_0")).model_file, "Model-q8_0.gguf");  // any case
  EXPECT_EQ(choose_files(kGgufRepo, parse_repo_ref("o/r:Q2_K")).files, Files{"Model-Q2_K.gguf"});
  // "Q4_K" is a prefix of Q4_K_M but must be followed by '.' or '-': no file has it.
  EXPECT_THROW(choose_files(kGgufRepo, parse_repo_ref("o/r:Q4_K")), Error);
  try {
    choose_files(kGgufRepo, parse_repo_ref("o/r:IQ1_S"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Model-Q2_K.gguf"), std::string::npos) << e.what();  // lists what there is
  }
}

TEST(FileChoice, DefaultFallsBackToQ8ThenTheFirstModel) {
  EXPECT_EQ(choose_files({"a-Q5_K.gguf", "a-Q8_0.gguf"}, parse_repo_ref("o/r")).model_file, "a-Q8_0.gguf");
  EXPECT_EQ(choose_files({"mmproj-f16.gguf", "x.imatrix.gguf", "a-Q5_K.gguf"}, parse_repo_ref("o/r")).model_file,
            "a-Q5_K.gguf");
}

TEST(FileChoice, SplitFilesComeTogether) {
  const hub::FilePlan plan = choose_files(kGgufRepo, parse_repo_ref("o/r:F16"));
  EXPECT_EQ(plan.model_file, "Big/Model-F16-00001-of-00002.gguf");
  EXPECT_EQ(plan.files, (Files{"Big/Model-F16-00001-of-00002.gguf", "Big/Model-F16-00002-of-00002.gguf"}));
  // Naming the second shard brings both and loads the first.
  const hub::FilePlan named = choose_files(kGgufRepo, parse_repo_ref("o/r:Big/Model-F16-00002-of-00002.gguf"));
  EXPECT_EQ(named.model_file, "Big/Model-F16-00001-of-00002.gguf");
  EXPECT_EQ(named.files.size(), 2u);
  // A missing shard is an error, not half a model.
  EXPECT_THROW(choose_files({"m-Q8_0-00001-of-00003.gguf", "m-Q8_0-00002-of-00003.gguf"}, parse_repo_ref("o/r:Q8_0")),
               Error);
  const hub::GgufSplit s = hub::gguf_split_info("x/m-00003-of-00010.gguf");
  EXPECT_EQ(s.prefix, "x/m");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 10);
  EXPECT_EQ(hub::gguf_split_info("m-00011-of-00010.gguf").count, 1);  // not a split
  EXPECT_EQ(hub::gguf_split_info("m-0001-of-00010.gguf").count, 1);
}

TEST(FileChoice, ANamedFile) {
  const hub::FilePlan plan = choose_files(kGgufRepo, parse_repo_ref("o/r:README.md"));
  EXPECT_EQ(plan.files, Files{"README.md"});
  EXPECT_THROW(choose_files(kGgufRepo, parse_repo_ref("o/r:nothere.gguf")), Error);
}

TEST(FileChoice, SafetensorsRepository) {
  const Files repo = {"config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors.index.json",
                      "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors", "pytorch_model.bin",
                      "modules.json", "1_Pooling/config.json", "2_Dense/config.json", "2_Dense/model.safetensors",
                      "2_Dense/pytorch_model.bin", "onnx/model.onnx"};
  const hub::FilePlan plan = choose_files(repo, parse_repo_ref("o/r"));
  EXPECT_TRUE(plan.safetensors);
  EXPECT_EQ(plan.model_file, "");
  EXPECT_EQ(plan.files, (Files{"config.json", "tokenizer.json", "tokenizer_config.json", "modules.json",
                               "model.safetensors.index.json"}));
  EXPECT_THROW(choose_files(repo, parse_repo_ref("o/r:Q4_K_M")), Error);

  const std::string index = R"({"metadata": {}, "weight_map": {"a": "model-00001-of-00002.safetensors",
                               "b": "model-00002-of-00002.safetensors", "c": "model-00001-of-00002.safetensors"}})";
  const std::string modules = R"([{"idx": 0, "path": "", "type": "sentence_transformers.models.Transformer"},
                                  {"idx": 1, "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                                  {"idx": 2, "path": "2_Dense", "type": "sentence_transformers.models.Dense"}])";
  EXPECT_EQ(hub::safetensors_followups(repo, index, modules),
            (Files{"1_Pooling/config.json", "2_Dense/config.json", "2_Dense/model.safetensors",
                   "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}));
  // Hostile indexes: a shard outside the repository, a path escape, not JSON.
  EXPECT_THROW(hub::safetensors_followups(repo, R"({"weight_map": {"a": "../../x.safetensors"}})", ""), Error);
  EXPECT_THROW(hub::safetensors_followups(repo, R"({"weight_map": {"a": "absent.safetensors"}})", ""), Error);
  EXPECT_THROW(hub::safetensors_followups(repo, R"({"weight_map": {"a": 3}})", ""), Error);
  EXPECT_THROW(hub::safetensors_followups(repo, "{", ""), Error);
  EXPECT_THROW(hub::safetensors_followups(repo, "", R"([{"path": "../up"}])"), Error);
  EXPECT_THROW(choose_files({"README.md", "model.onnx"}, parse_repo_ref("o/r")), Error);
}

}  // namespace
}  // namespace ridge::testing
