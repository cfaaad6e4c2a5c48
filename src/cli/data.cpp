// `k3lab data manifest <folder> --source TEXT --licence TEXT [--tokenizer T]`: pins a dataset folder
// (include/k3lab/train/data_manifest.hpp, docs/data.md "Pinned datasets").
#include <iostream>

#include "cli/commands.hpp"
#include "k3lab/train/data_manifest.hpp"

namespace k3lab::cli {

void register_data(CLI::App& app, Context& ctx) {
  auto* cmd = app.add_subcommand("data", "Pin a training dataset folder (the manifest a protocol freezes)");
  cmd->require_subcommand(1, 1);
  auto* manifest = cmd->add_subcommand(
      "manifest",
      "Write <folder>/manifest.json: every shard's name, size, token count and SHA-256, the tokenizer, "
      "source and licence; print its SHA-256 for the protocol's data.manifest_sha256");
  struct Options {
    std::string folder;
    std::string source;
    std::string licence;
    std::string tokenizer = "gpt2";
  };
  auto opt = std::make_shared<Options>();
  manifest->add_option("folder", opt->folder, "The dataset folder (<data root>/<data.dataset>) holding the shards")
      ->required();
  manifest->add_option("--source", opt->source, "Where the data comes from (required), recorded verbatim");
  manifest->add_option("--licence", opt->licence, "The data's licence (required), recorded verbatim");
  manifest
      ->add_option("--tokenizer", opt->tokenizer,
                   "The tokenizer the shards were made with (the protocol's "
                   "data.tokenizer)")
      ->capture_default_str();
  manifest->callback([opt, &ctx] {
    const train::ManifestRequest request{opt->folder, opt->tokenizer, opt->source, opt->licence};
    const auto built = train::build_dataset_manifest(request);
    const std::string sha = train::write_dataset_manifest(built, opt->folder);
    std::cout << "wrote " << (std::filesystem::path(opt->folder) / train::kDatasetManifestFile).string() << ": "
              << built.shards.size() << " shards of dataset \"" << built.dataset << "\"\n"
              << "manifest sha256 " << sha << "\n"
              << "To pin it: put this hash in the protocol's parameters.data.manifest_sha256, raise its version, and "
                 "run `k3lab freeze <experiment>`\n";
    ctx.exit_code = 0;
  });
}

}  // namespace k3lab::cli
