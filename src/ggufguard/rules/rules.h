// The rule families. Each reads the parsed view and records findings; none
// writes into the view. What several rules depend on (the effective
// alignment, the data offset, the tensors' byte sizes and absolute offsets)
// the parser derived once (format/layout.h).
#ifndef GGUFGUARD_RULES_RULES_H_
#define GGUFGUARD_RULES_RULES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "ggufguard/format/header.h"
#include "ggufguard/io/source.h"
#include "ggufguard/rules/sampling_rules.h"
#include "ggufguard/rules/template_rules.h"
#include "ggufguard/findings/finding.h"
#include "ggufguard/rules/known_keys.h"
#include "ggufguard/findings/policy.h"

namespace ggufguard {

// llama.cpp's LLAMA_MAX_LAYERS: get_key_or_arr throws above it (GG4009), and
// per-layer std::arrays are this long, so per-layer rules walk at most this
// many layers.
inline constexpr uint32_t kLlamaMaxLayers = 512;
// llama.cpp's LLAMA_MAX_EXPERTS (1024 since Kimi K3; 512 before, 256 before
// 2026): load_hparams asserts expert_count is at most this (GG9055). A file
// between two limits aborts the older loaders.
inline constexpr uint32_t kLlamaMaxExperts = 1024;

class StringArrayScreen;  // parse/parser.h

struct RuleContext {
  const GgufHeader& header;
  FileView& file;
  FindingSink& sink;
  const Policy& policy;
  // The token array's duplicate screen from the parse (kTokenArrayKey),
  // when the caller asked the parser for it; GG9054 fills one itself
  // without.
  const StringArrayScreen* token_screen = nullptr;
};

// The string array whose screen GG9054 reads: validations ask the parser to
// screen it in its walk (ParseOptions::screen).
inline constexpr std::string_view kTokenArrayKey = "tokenizer.ggml.tokens";

// 3xxx: keys (grammar, bytes, duplicates, collisions) and value encodings
// (UTF-8, NUL, bools, finite floats).
// Duplicates and collisions come from the index's KeyGroups.
void CheckMetadataEncoding(RuleContext& ctx, const KeyIndex& keys);
// 4xxx: general.alignment (the layout's effective alignment: format/layout.h).
void CheckAlignment(RuleContext& ctx);
// 5xxx: tensor names, dims and types, and why a tensor has no byte size.
void CheckTensorInfos(RuleContext& ctx);
// 6xxx: where tensor data lies in the file. Reads padding bytes past the
// header, so it can fail with an I/O error.
absl::Status CheckDataLayout(RuleContext& ctx);
// Every offset at which CheckDataLayout may start or end a zero check (the
// end of the file aside), known from the parsed header's layout: a stream records what it needs of its data
// section at these (StreamZeroMap) without keeping the bytes.
std::vector<uint64_t> DataLayoutBoundaries(const GgufHeader& header);
// Where CheckDataLayout says the file must end (a byte past it is GG6007
// trailing-bytes), when the header alone fixes it: every tensor's extent
// known. A stream with --fail-fast stops reading once it passes it.
std::optional<uint64_t> DataSectionEnd(const GgufHeader& header);

// Reports one rule's findings from a loop that may find millions (a crafted
// vocabulary, a million unknown keys). Past the policy's per-rule cap the
// sink only counts findings, so the message, the costly part, is built only
// for findings it will list; `make` is called at most max_findings_per_rule
// times.
class RuleReporter {
 public:
  RuleReporter(RuleContext& ctx, RuleId id) : sink_(ctx.sink), id_(id), enabled_(ctx.sink.Enabled(id)) {}
  bool enabled() const { return enabled_; }
  // The message is built only for a finding that is listed (AddLazy).
  template <typename MakeMessage>
  void Add(uint64_t offset, MakeMessage&& make) {
    if (enabled_) sink_.AddLazy(id_, offset, std::forward<MakeMessage>(make));
  }

 private:
  FindingSink& sink_;
  RuleId id_;
  bool enabled_;
};

// The semantic families read metadata through `keys` (llama.cpp's reading)
// and the tensors' byte sizes from the layout. Each keeps its
// per-token work to flat loops without allocation (docs/performance.md).
//
// 4004+: the known-key table, general.architecture, hyperparameters, the
// shapes of the embedding tensors, quantization version, file type, split.
void CheckKnownKeys(RuleContext& ctx, const KeyIndex& keys);
// 7xxx: the vocabulary arrays, special token ids, byte tokens, merges.
void CheckTokenizer(RuleContext& ctx, const KeyIndex& keys);
// 7006-7008: what llama.cpp's vocabulary loader refuses before reading a
// token (vocab_load_rules.cc). Called by CheckTokenizer.
void CheckVocabularyLoad(RuleContext& ctx, const KeyIndex& keys);
// 8xxx: every tokenizer.chat_template* value, through AnalyseChatTemplate
// under the policy's limits. Also fills the report's template list (digest,
// roots, folded names) from the same analysis, so that no renderer analyses
// a template again, and none with other limits than the policy's.
void CheckChatTemplates(RuleContext& ctx, TemplateDigests& digests);
// 9160, 9161, 9165: what llama.cpp's model loader makes of a drafter's
// target layers and of a model without token_embd.weight
// (model_load_rules.cc).
void CheckModelLoad(RuleContext& ctx, const KeyIndex& keys);
// Whether llama.cpp's loader for `arch` (a model architecture of the
// generated table) requires token_embd.weight: GG9165, for one file and
// for a split set.
bool RequiresTokenEmbedding(std::string_view arch);
// 9162: the tensor and key counts against what ggml's gguf_init spends on
// its duplicate-name scan (loader_cost_rules.cc).
void CheckLoaderCost(RuleContext& ctx);
// 9163: general.sampling.* as llama.cpp reads them; fills the report's list
// of them (sampling_rules.h) whatever the policy.
void CheckSamplingSettings(RuleContext& ctx, const KeyIndex& keys, SamplingSettings* out);
// 9150-9152: a LoRA adapter or control vector that llama.cpp refuses on its
// own (adapter_rules.cc); against a base model: adapter/base_model.h.
void CheckAdapter(RuleContext& ctx, const KeyIndex& keys);
// 9xxx: what a loader would allocate (KV cache, vocabulary, header objects)
// against the policy limits.
void CheckResourceUse(RuleContext& ctx, const KeyIndex& keys);
// GG9001: the tensors' declared sizes against the file's size. With
// CheckDataLayout, the only rules that need the file's size: a stream knows
// it only once it has been read.
void CheckTensorAllocation(RuleContext& ctx);

// A per-layer hyperparameter as llama.cpp's get_key_or_arr reads it: a u32
// for every layer, or element `il` of a bool/u32/i32 array exactly n_layer
// long; nullopt for any other shape (GG4004/GG4010's business).
std::optional<uint64_t> PerLayerValue(const KeyValue* kv, uint32_t il, uint32_t n_layer);
// Where a finding about that value points: element `il` of an array, the
// value of a scalar.
uint64_t PerLayerOffset(const KeyValue& kv, uint32_t il);
// Layer `il`'s query and K/V head counts as llama.cpp's load_hparams sets
// them (n_head(il), n_head_kv(il)): {arch}.attention.head_count, 0 when
// absent, and head_count_kv, head_count's value when absent, each read by
// PerLayerValue; nullopt where the loader refuses the value's shape.
struct LayerHeads {
  std::optional<uint64_t> heads;
  std::optional<uint64_t> kv_heads;
};
LayerHeads HeadsOfLayer(const KeyValue* heads_kv, const KeyValue* kv_heads_kv, uint32_t il, uint32_t n_layer);
// The layers with attention K/V tensors ("blk.{il}.attn_k.*", attn_v,
// attn_qkv, the MLA attn_kv_* and attn_k_b/attn_v_b): the first such tensor
// of each layer below n_layer, or nullptr.
std::vector<const TensorInfo*> KvTensorsByLayer(const GgufHeader& h, uint32_t n_layer);
// Architectures whose loader shapes each layer's K/V projections with that
// layer's own head_count_kv (deci, openelm, the hybrids: GG9056 exempts them).
bool KvWidthPerLayer(std::string_view arch);
// Those of them whose loader reads a layer's head_count_kv of 0 as a layer
// without attention (a recurrent, convolution or linear-attention layer:
// GG4017 accepts the 0 there).
bool ZeroKvHeadsMarkALayerKind(std::string_view arch);
// A LoRA or control-vector adapter (general.type "adapter", or adapter.type):
// it names its base model's architecture but holds no model.
bool IsAdapter(const KeyIndex& keys);
// Whether llama.cpp reads the hyperparameters of this file (a model
// architecture's) when it loads it: llama_model_load runs load_hparams and
// the vocabulary loader for every file, but a vocabulary-only load
// (llama_model_params.vocab_only) leaves load_hparams after general.name.
// A file with tensors is a model; so is a split model's first part without
// tensors (llama-gguf-split --no-tensor-first-split: the loader reads the
// metadata from it and the tensors from the others). Another file without
// tensors can only be loaded for its vocabulary, which it must name
// (tokenizer.ggml.model, required by the vocabulary loader); one that names
// none is no vocabulary, and is judged as a model's header.
bool ReadsHyperparameters(const GgufHeader& h, const KeyIndex& keys);
// 9050-9099: files that abort llama.cpp's loader, found by the loader
// oracle (fuzz/oracle).
void CheckLoaderAsserts(RuleContext& ctx, const KeyIndex& keys);
// 9140-9149: a multimodal projector (mmproj) file, as llama.cpp's clip
// loader (tools/mtmd/clip.cpp) reads it: what it refuses and what crashes
// it (clip_rules.cc). Runs only on such a file (IsClipProjector).
void CheckClipProjector(RuleContext& ctx, const KeyIndex& keys);
// general.architecture "clip", or no architecture and a
// clip.has_{vision,audio}_encoder key: the file the clip loader reads.
bool IsClipProjector(const KeyIndex& keys);

// The normal form a key takes in the readers that disagree with byte
// equality (C-string truncation at NUL, white-space trimming, case folding).
std::string CanonicalKey(std::string_view key);

}  // namespace ggufguard

#endif  // GGUFGUARD_RULES_RULES_H_
