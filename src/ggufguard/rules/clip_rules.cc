// 9140-9149: multimodal projector files (mmproj: general.architecture
// "clip"), as llama.cpp's clip loader reads them (tools/mtmd/clip.cpp,
// clip_model_loader; names in tools/mtmd/clip-impl.h), read at commit
// 0024aa7417efd50a7c2a79e049dfbbbceb0beaaf (the llava graph,
// tools/mtmd/models/llava.cpp, at 623ea2ba30ac1387d6c6eb2f6a0cf758915aafb7).
//
// That loader is not llama.cpp's model loader: it reads each key with a
// getter that asserts the key's type (gguf_get_val_u32 and friends abort on
// another), stores u32 values in ints, reads integer arrays as int32 whatever
// their element type, and uses hyperparameters as divisors, loop strides and
// vector indices without the bounds checks llama_model_loader has. (A key
// of another type than its getter's aborts too; that is GG4004's, whose
// known-key table types every clip.* key.) Each rule
// here is one of those reads, checked as the loader decides it: what it
// refuses (a throw: the file does not load) and what crashes it or reads
// out of bounds (an abort, a division by zero, a loop that never ends).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ggufguard/base/sv.h"
#include "ggufguard/base/text.h"
#include "ggufguard/format/value_type.h"
#include "ggufguard/rules/rules.h"

namespace ggufguard {
namespace {

constexpr std::string_view kClipCommit = "0024aa7417ef";
constexpr uint64_t kIntMax = 0x7fffffff;  // the loader's ints hold the u32 values

// PROJECTOR_TYPE_NAMES (clip-impl.h): every name clip_projector_type_from_string
// knows but "gemma3na", which is among them but has no case in load_hparams
// (it throws "unknown vision projector type"); "qwen2.5o" becomes
// qwen2.5vl_merger or qwen2a by modality.
constexpr std::string_view kProjectorNames[] = {
    "mlp",        "ldp",        "ldpv2",      "resampler",  "adapter",        "qwen2vl_merger", "qwen2.5vl_merger",
    "qwen3vl_merger", "step3vl", "gemma3",    "gemma3nv",   "gemma4v",        "gemma4a",        "phi4",
    "idefics3",   "pixtral",    "ultravox",   "internvl",   "llama4",         "qwen2a",         "qwen3a",
    "glma",       "qwen2.5o",   "voxtral",    "meralion",   "musicflamingo",  "lfm2",           "kimivl",
    "paddleocr",  "lightonocr", "cogvlm",     "janus_pro",  "dots_ocr",       "deepseekocr",    "lfm2a",
    "glm4v",      "youtuvl",    "yasa2",      "kimik25",    "nemotron_v2_vl", "hunyuanocr",     "hunyuanvl",
    "parakeet"};

bool KnownProjector(std::string_view name) {
  return std::find(std::begin(kProjectorNames), std::end(kProjectorNames), name) != std::end(kProjectorNames);
}

template <size_t N>
bool OneOf(std::string_view name, const std::string_view (&names)[N]) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}


enum class Getter : uint8_t { kU32, kI32, kF32, kBool, kString, kIntArray };

ValueType GetterType(Getter g) {
  switch (g) {
    case Getter::kU32: return ValueType::kUint32;
    case Getter::kI32: return ValueType::kInt32;
    case Getter::kF32: return ValueType::kFloat32;
    case Getter::kBool: return ValueType::kBool;
    case Getter::kString: return ValueType::kString;
    case Getter::kIntArray: return ValueType::kArray;
  }
  return ValueType::kArray;
}

// One key the loader reads for a modality.
struct Read {
  std::string key;
  Getter getter;
  bool required;  // get_*(key, out, true): "Key not found" is thrown without it
};

// The keys load_hparams reads for `modality` ("vision" or "audio") and the
// projector `proj` (already resolved), in its order.
std::vector<Read> ReadPlan(std::string_view modality, std::string_view proj) {
  const bool vision = modality == "vision";
  std::vector<Read> plan;
  auto read = [&](std::string key, Getter g, bool required) { plan.push_back({std::move(key), g, required}); };
  const std::string m = absl::StrCat("clip.", Sv(modality), ".");
  read(m + "embedding_length", Getter::kU32, true);
  read(m + "attention.head_count", Getter::kU32, true);
  read(m + "feed_forward_length", Getter::kU32, true);
  read(m + "block_count", Getter::kU32, true);
  read(m + "projection_dim", Getter::kU32, true);
  read(m + "attention.layer_norm_epsilon", Getter::kF32, true);
  if (vision) {
    read("clip.vision.image_size", Getter::kU32, true);
    read("clip.vision.patch_size", Getter::kU32, true);
    read("clip.minicpmv_version", Getter::kI32, false);
    read("clip.minicpmv_query_num", Getter::kU32, false);
  } else {
    read("clip.audio.num_mel_bins", Getter::kU32, true);
  }
  read("clip.vision.image_grid_pinpoints", Getter::kIntArray, false);
  read("clip.use_gelu", Getter::kBool, false);
  read("clip.use_silu", Getter::kBool, false);
  read("clip.vision.mm_patch_merge_type", Getter::kString, false);
  read("clip.vision.feature_layer", Getter::kIntArray, false);

  // The projector's own keys (load_hparams' switch).
  constexpr std::string_view kScale = "clip.vision.projector.scale_factor";
  constexpr std::string_view kMerge = "clip.vision.spatial_merge_size";
  auto pixels = [&](bool required) {
    read("clip.vision.image_min_pixels", Getter::kU32, required);
    read("clip.vision.image_max_pixels", Getter::kU32, required);
  };
  static constexpr std::string_view kScaleOnly[] = {"nemotron_v2_vl", "lfm2",  "kimivl",  "gemma3",
                                                    "gemma4v",        "gemma3nv", "llama4"};
  if (proj == "internvl") {
    read(std::string(kScale), Getter::kU32, false);
    read("clip.vision.preproc_min_tiles", Getter::kU32, false);
    read("clip.vision.preproc_max_tiles", Getter::kU32, false);
  } else if (OneOf(proj, kScaleOnly)) {
    read(std::string(kScale), Getter::kU32, false);
  } else if (proj == "idefics3" || proj == "step3vl") {
    read(std::string(kScale), Getter::kU32, false);
    read("clip.vision.preproc_image_size", Getter::kU32, false);
  } else if (proj == "kimik25") {
    read(std::string(kScale), Getter::kU32, false);
    pixels(false);
  } else if (proj == "dots_ocr") {
    read(std::string(kScale), Getter::kU32, true);
    pixels(true);
  } else if (proj == "phi4" || proj == "paddleocr") {
    pixels(true);
  } else if (proj == "hunyuanocr") {
    read(std::string(kMerge), Getter::kU32, false);
    pixels(true);
  } else if (proj == "pixtral" || proj == "hunyuanvl" || proj == "glm4v") {
    read(std::string(kMerge), Getter::kU32, false);
  } else if (proj == "lightonocr") {
    read(std::string(kMerge), Getter::kU32, false);
    read("clip.vision.preproc_image_size", Getter::kU32, false);
  } else if (proj == "qwen2vl_merger" || proj == "qwen2.5vl_merger" || proj == "qwen3vl_merger") {
    read(std::string(kMerge), Getter::kU32, false);
    read("clip.vision.n_wa_pattern", Getter::kU32, proj == "qwen2.5vl_merger");  // only 2.5 requires it
  } else if (proj == "youtuvl") {
    read(std::string(kMerge), Getter::kU32, false);
    read("clip.vision.window_size", Getter::kU32, true);
    read("clip.vision.wa_layer_indexes", Getter::kIntArray, true);
  } else if (proj == "deepseekocr") {
    read("clip.vision.sam.block_count", Getter::kU32, true);
    read("clip.vision.sam.head_count", Getter::kU32, true);
    read("clip.vision.sam.embedding_length", Getter::kU32, true);
    read("clip.vision.window_size", Getter::kU32, true);
  } else if (proj == "parakeet") {
    read("clip.audio.subsampling_factor", Getter::kU32, false);
  } else if (proj == "ultravox" || proj == "voxtral" || proj == "meralion" || proj == "glma" || proj == "qwen2a" ||
             proj == "qwen3a" || proj == "musicflamingo") {
    read("clip.audio.projector.stack_factor", Getter::kU32,
         proj == "ultravox" || proj == "voxtral" || proj == "meralion" || proj == "glma");
  }
  return plan;
}

// The key that sets n_merge for the projectors whose code divides by it
// (clip_n_output_tokens: gemma3, gemma4v, idefics3, internvl, nemotron_v2_vl,
// llama4 divide the patch count by n_merge squared; step3vl, lfm2, kimivl,
// kimik25 by patch_size * n_merge; dots_ocr and hunyuan* by n_merge) or
// steps a loop by it (clip_image_batch_encode's positions for
// qwen2vl/qwen3vl/glm4v: `y += merge_ratio` never ends at 0). Empty for the
// others (pixtral and lightonocr guard 0; paddleocr, youtuvl, qwen2.5vl read
// no n_merge that reaches a divisor here).
std::string_view MergeKeyDividedBy(std::string_view proj) {
  static constexpr std::string_view kByScale[] = {"gemma3", "gemma4v", "idefics3", "internvl", "nemotron_v2_vl",
                                                  "llama4", "step3vl", "lfm2",     "kimivl",   "kimik25",
                                                  "dots_ocr"};
  static constexpr std::string_view kByMerge[] = {"qwen2vl_merger", "qwen3vl_merger", "glm4v", "hunyuanocr",
                                                  "hunyuanvl"};
  // Audio: the whisper encoder's StackAudioFrames (ultravox, voxtral,
  // meralion: padded_len / (n_embd * stack_factor)) and glma's graph
  // (n_pos % stack_factor) divide by the stack factor.
  static constexpr std::string_view kByStack[] = {"ultravox", "voxtral", "meralion", "glma"};
  if (OneOf(proj, kByScale)) return "clip.vision.projector.scale_factor";
  if (OneOf(proj, kByMerge)) return "clip.vision.spatial_merge_size";
  if (OneOf(proj, kByStack)) return "clip.audio.projector.stack_factor";
  return {};
}

class ClipChecker {
 public:
  ClipChecker(RuleContext& ctx, const KeyIndex& keys) : ctx_(ctx), keys_(keys) {}

  void Run() {
    const bool vision = ReadModalityFlag("clip.has_vision_encoder");
    const bool audio = ReadModalityFlag("clip.has_audio_encoder");
    std::string_view vision_proj;
    if (vision) vision_proj = CheckModality("vision");
    // clip_init skips the audio encoder of a gemma3nv file.
    if (audio && vision_proj != "gemma3nv") CheckModality("audio");
  }

 private:
  // get_bool on clip.has_{vision,audio}_encoder (absent: false).
  bool ReadModalityFlag(std::string_view key) {
    const KeyValue* kv = keys_.Find(key);
    if (kv == nullptr) return false;
    if (!TypeMatches(*kv, Getter::kBool)) return false;
    return kv->value().AsUnsigned().value_or(0) != 0;
  }

  // Whether the key has the type the loader's getter reads. Another type
  // aborts the loader (gguf_get_val_* asserts it), but that is GG4004's
  // finding: the known-key table types every clip.* key the loader reads.
  // The rules here judge only values of the right type.
  static bool TypeMatches(const KeyValue& kv, Getter g) {
    if (g == Getter::kIntArray) {
      return kv.type() == ValueType::kArray &&
             (kv.value().array.element_type == ValueType::kInt32 || kv.value().array.element_type == ValueType::kUint32);
    }
    return kv.type() == GetterType(g);
  }

  // The projector type load_hparams resolves for `modality`, or empty when
  // it throws (GG9140) or aborts (GG9141) first.
  std::string_view ResolveProjector(std::string_view modality) {
    const KeyValue* kv = keys_.Find("clip.projector_type");
    std::string_view name;
    std::string_view key = "clip.projector_type";
    if (kv != nullptr) {
      if (!TypeMatches(*kv, Getter::kString)) return {};
      name = CString(kv->value().AsString());
    }
    if (name.empty()) {
      const std::string modal_key = absl::StrCat("clip.", Sv(modality), ".projector_type");
      const KeyValue* modal = keys_.Find(modal_key);
      if (modal != nullptr) {
        if (!TypeMatches(*modal, Getter::kString)) return {};
        name = CString(modal->value().AsString());
        kv = modal;
        key = modality == "vision" ? "clip.vision.projector_type" : "clip.audio.projector_type";
      }
    }
    if (!KnownProjector(name) || name == "gemma3na") {
      const uint64_t at = kv != nullptr ? kv->value().offset : ModalityOffset(modality);
      ctx_.sink.Add(RuleId::kClipUnknownProjector, at,
                    name.empty()
                        ? absl::StrCat("the ", Sv(modality),
                                       " encoder names no projector type (clip.projector_type and clip.", Sv(modality),
                                       ".projector_type are absent or empty): llama.cpp's clip loader throws "
                                       "\"unknown projector type\"")
                        : absl::StrCat(Sv(key), " '", EscapeForDisplay(name), "' is no ", Sv(modality),
                                       " projector llama.cpp's clip loader builds (it throws \"unknown ",
                                       name == "gemma3na" ? "vision " : "", "projector type\"); llama.cpp ",
                                       Sv(kClipCommit), " knows ", std::size(kProjectorNames)));
      return {};
    }
    if (name == "qwen2.5o") return modality == "vision" ? "qwen2.5vl_merger" : "qwen2a";
    return name;
  }

  uint64_t ModalityOffset(std::string_view modality) const {
    const KeyValue* flag =
        keys_.Find(modality == "vision" ? "clip.has_vision_encoder" : "clip.has_audio_encoder");
    return flag != nullptr ? flag->value().offset : 0;
  }

  // A u32 the loader stored (into an int) from `key`, or nullopt when the
  // key is absent or not a u32.
  std::optional<uint64_t> U32(std::string_view key) const {
    const KeyValue* kv = keys_.Find(key);
    if (kv == nullptr || kv->type() != ValueType::kUint32) return std::nullopt;
    return *kv->value().AsUnsigned();
  }
  uint64_t OffsetOf(std::string_view key) const {
    const KeyValue* kv = keys_.Find(key);
    return kv != nullptr ? kv->value().offset : 0;
  }

  std::string_view CheckModality(std::string_view modality) {
    const std::string_view proj = ResolveProjector(modality);
    if (proj.empty()) return proj;
    bool complete = true;  // every key read, each of its getter's type
    for (const Read& r : ReadPlan(modality, proj)) {
      const KeyValue* kv = keys_.Find(r.key);
      if (kv == nullptr) {
        if (r.required) {
          complete = false;
          ctx_.sink.Add(RuleId::kClipMissingKey, ModalityOffset(modality),
                        absl::StrCat("the ", Sv(modality), " encoder (projector '", Sv(proj), "') has no ", r.key,
                                     ", which llama.cpp's clip loader requires: it throws \"Key not found\""));
        }
        continue;
      }
      if (!TypeMatches(*kv, r.getter)) {
        complete = false;  // GG4004
        continue;
      }
      if (r.key == "clip.vision.image_grid_pinpoints") CheckPinpoints(*kv);
    }
    if (modality == "vision") {
      CheckNormalization("clip.vision.image_mean");
      CheckNormalization("clip.vision.image_std");
    }
    if (!complete) return proj;
    CheckRefusedValues(modality, proj);
    CheckHeads(modality, proj);
    CheckMergeSize(proj);
    CheckFeatureLayers(modality, proj);
    CheckPatchGrid(modality, proj);
    return proj;
  }

  // get_arr_int reads the pinpoints, then load_hparams takes them in
  // (width, height) pairs: pinpoints[i] and pinpoints[i + 1] for every even
  // i below the count, one past the end for an odd count.
  void CheckPinpoints(const KeyValue& kv) {
    const uint64_t count = kv.value().array.count;
    if (count % 2 == 0) return;
    ctx_.sink.Add(RuleId::kClipArrayShape, kv.value().offset,
                  absl::StrCat("clip.vision.image_grid_pinpoints has ", count,
                               " elements, an odd count: llama.cpp's clip loader reads them as (width, height) pairs "
                               "and reads the element past the end for the last one"));
  }

  // image_mean and image_std: gguf_find_key asserted present, then three
  // floats read from gguf_get_arr_data.
  void CheckNormalization(std::string_view key) {
    const KeyValue* kv = keys_.Find(key);
    if (kv == nullptr) {
      ctx_.sink.Add(RuleId::kClipMissingKey, ModalityOffset("vision"),
                    absl::StrCat("the vision encoder has no ", Sv(key),
                                 "; llama.cpp's clip loader asserts it is present: the process aborts"));
      return;
    }
    const Value v = kv->value();
    const ValueType elem = kv->type() == ValueType::kArray ? v.array.element_type : kv->type();
    const uint64_t count = kv->type() == ValueType::kArray ? v.array.count : 1;
    // Strings abort in gguf_get_arr_data: GG4004's finding (the table wants
    // scalars).
    if (elem == ValueType::kString || elem == ValueType::kArray) return;
    if (elem == ValueType::kFloat32 && count >= 3) return;
    const uint64_t bytes = SatMulSmall(count, ScalarSize(elem));
    ctx_.sink.Add(RuleId::kClipArrayShape, v.offset,
                  absl::StrCat(Sv(key), " is ", count, " ", Sv(ValueTypeName(elem)),
                               count == 1 ? " value" : " values", "; llama.cpp's clip loader reads 3 f32 from it",
                               bytes < 12 ? ", past the end of its data" : ", each the wrong value"));
  }

  static uint64_t SatMulSmall(uint64_t count, uint64_t size) {
    return count > (uint64_t{1} << 40) ? uint64_t{1} << 40 : count * size;  // only compared with 12
  }

  // load_hparams' sanity checks (throws) and internvl's GGML_ASSERT on the
  // tile counts, with the u32 values as the ints the loader holds.
  void CheckRefusedValues(std::string_view modality, std::string_view proj) {
    auto refuse = [&](std::string_view key, std::string what) {
      ctx_.sink.Add(RuleId::kClipValueRefused, OffsetOf(key),
                    absl::StrCat(Sv(key), " ", what, " (projector '", Sv(proj), "')"));
    };
    const std::string embd_key = absl::StrCat("clip.", Sv(modality), ".embedding_length");
    if (const auto n_embd = U32(embd_key); n_embd && (*n_embd == 0 || *n_embd > kIntMax)) {
      refuse(embd_key, absl::StrCat("is ", *n_embd, ", not above 0 as an int: llama.cpp's clip loader throws"));
    }
    // deepseekocr sets its own sizes after reading; audio encoders never read them.
    if (modality == "vision" && proj != "deepseekocr") {
      if (const auto size = U32("clip.vision.image_size"); size && *size > kIntMax) {
        refuse("clip.vision.image_size", absl::StrCat("is ", *size, ", negative as an int: llama.cpp's clip loader throws"));
      }
      if (const auto patch = U32("clip.vision.patch_size"); patch && (*patch == 0 || *patch > kIntMax)) {
        refuse("clip.vision.patch_size",
               absl::StrCat("is ", *patch, ", not above 0 as an int: llama.cpp's clip loader throws"));
      }
    }
    const KeyValue* gelu = keys_.Find("clip.use_gelu");
    const KeyValue* silu = keys_.Find("clip.use_silu");
    if (gelu != nullptr && silu != nullptr && gelu->value().AsUnsigned().value_or(0) != 0 &&
        silu->value().AsUnsigned().value_or(0) != 0) {
      refuse("clip.use_silu", "and clip.use_gelu are both true: llama.cpp's clip loader throws");
    }
    const auto min_px = U32("clip.vision.image_min_pixels");
    const auto max_px = U32("clip.vision.image_max_pixels");
    const bool reads_pixels = proj == "phi4" || proj == "paddleocr" || proj == "dots_ocr" || proj == "hunyuanocr";
    const auto as_int = [](uint64_t v) { return static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(v))); };
    if (min_px && max_px) {
      const int64_t lo = as_int(*min_px), hi = as_int(*max_px);
      // kimik25 keeps them only when both are above 0.
      if ((reads_pixels || (proj == "kimik25" && lo > 0 && hi > 0)) && hi < lo) {
        refuse("clip.vision.image_max_pixels",
               absl::StrCat("is ", hi, ", below clip.vision.image_min_pixels ", lo, ": llama.cpp's clip loader throws"));
      }
    }
    if (proj == "internvl") {
      const int64_t lo = as_int(U32("clip.vision.preproc_min_tiles").value_or(1));
      const int64_t hi = as_int(U32("clip.vision.preproc_max_tiles").value_or(12));
      if (lo > hi || hi >= static_cast<int64_t>(kIntMax)) {
        refuse(keys_.Find("clip.vision.preproc_max_tiles") != nullptr ? "clip.vision.preproc_max_tiles"
                                                                       : "clip.vision.preproc_min_tiles",
               absl::StrCat("gives tiles from ", lo, " to ", hi,
                            "; llama.cpp's clip loader asserts min <= max < INT32_MAX: the process aborts"));
      }
    }
  }

  // clip_graph's constructor sets d_head = n_embd / n_head for every graph,
  // at warmup (clip_init) or the first image; the transformer graphs then
  // reshape Q, K and V to (d_head, n_head, n_pos), which ggml asserts holds
  // every element.
  void CheckHeads(std::string_view modality, std::string_view proj) {
    const std::string head_key = absl::StrCat("clip.", Sv(modality), ".attention.head_count");
    const std::string embd_key = absl::StrCat("clip.", Sv(modality), ".embedding_length");
    const auto heads = U32(head_key);
    const auto n_embd = U32(embd_key);
    if (!heads || !n_embd || *n_embd == 0 || *n_embd > kIntMax) return;
    if (*heads == 0) {
      ctx_.sink.Add(RuleId::kClipHeadCount, OffsetOf(head_key),
                    absl::StrCat(head_key, " is 0: llama.cpp's clip graph divides ", embd_key,
                                 " by it (d_head) when it is built at load: an integer division by zero"));
      return;
    }
    // gemma3nv's MobileNet graph reshapes nothing by d_head; a file that
    // names its head size (a later loader's n_embd_head) need not divide.
    if (proj == "gemma3nv" || NamesHeadSize(modality)) return;
    if (*heads > kIntMax || *n_embd % *heads != 0) {
      ctx_.sink.Add(RuleId::kClipHeadCount, OffsetOf(head_key),
                    absl::StrCat(head_key, " ", *heads, " does not divide ", embd_key, " ", *n_embd,
                                 ": llama.cpp's clip graph reshapes the attention to ", *n_embd / *heads,
                                 " x heads, which ggml asserts against: the process aborts when the graph is built"));
    }
  }

  // Any clip.{modality}.attention.* key beside head_count and
  // layer_norm_epsilon (key_length, head_dim, ...): bounded by the KV count.
  bool NamesHeadSize(std::string_view modality) const {
    const std::string prefix = absl::StrCat("clip.", Sv(modality), ".attention.");
    for (const KeyValue& kv : ctx_.header.kvs) {
      const std::string_view key = kv.key();
      if (key.substr(0, prefix.size()) != prefix) continue;
      const std::string_view rest = key.substr(prefix.size());
      if (rest != "head_count" && rest != "layer_norm_epsilon") return true;
    }
    return false;
  }

  void CheckMergeSize(std::string_view proj) {
    const std::string_view key = MergeKeyDividedBy(proj);
    if (key.empty()) return;
    const auto merge = U32(key);
    if (!merge || *merge != 0) return;  // absent: a default above 0
    const bool loops = proj == "qwen2vl_merger" || proj == "qwen3vl_merger" || proj == "glm4v";
    ctx_.sink.Add(RuleId::kClipMergeSize, OffsetOf(key),
                  absl::StrCat(Sv(key), " is 0 for projector '", Sv(proj), "': llama.cpp's clip code ",
                               loops ? "steps its position loop by it and never ends on the first image"
                                     : absl::StrCat("divides by it on the first ",
                                                    key.substr(0, 10) == "clip.audio" ? "audio clip" : "image",
                                                    ": an integer division by zero")));
  }

  // clip_graph_llava (mlp, ldp, ldpv2, adapter) runs layers up to the
  // deepest feature layer, indexing model.layers (block_count long) with
  // each: one past block_count reads outside the vector.
  void CheckFeatureLayers(std::string_view modality, std::string_view proj) {
    if (modality != "vision") return;
    if (proj != "mlp" && proj != "ldp" && proj != "ldpv2" && proj != "adapter") return;
    const KeyValue* kv = keys_.Find("clip.vision.feature_layer");
    const auto blocks = U32("clip.vision.block_count");
    if (kv == nullptr || !blocks || kv->type() != ValueType::kArray) return;
    const ArrayView& a = kv->value().array;
    if (a.element_type != ValueType::kInt32 && a.element_type != ValueType::kUint32) return;  // GG9143
    const uint64_t n_layer = std::min<uint64_t>(*blocks, kIntMax);  // as the int it is held in
    int64_t deepest = -1;
    for (uint64_t i = 0; i < a.count; ++i) {  // count proven present by the parser
      deepest = std::max<int64_t>(deepest, static_cast<int32_t>(a.ScalarAt<uint32_t>(i)));
    }
    if (deepest > static_cast<int64_t>(n_layer)) {
      ctx_.sink.Add(RuleId::kClipFeatureLayer, kv->value().offset,
                    absl::StrCat("clip.vision.feature_layer names layer ", deepest, " of a ", n_layer,
                                 "-layer encoder: llama.cpp's llava graph runs layers up to it and indexes its "
                                 "layer vector past the end"));
    }
  }

  // Two loops clip_image_batch_encode runs on an image, sized by the patch
  // grid: minicpmv's bucket coordinates are two `int[1024]` on the stack,
  // filled for every patch row and column of the slice (image_size /
  // patch_size a side for a slice as large as image_size); youtuvl's window
  // loop steps by window_size / patch_size / 2, which is 0 for a window
  // under two patches (window_size 0 means 112).
  void CheckPatchGrid(std::string_view modality, std::string_view proj) {
    if (modality != "vision") return;
    const auto patch = U32("clip.vision.patch_size");
    if (!patch || *patch == 0 || *patch > kIntMax) return;  // GG9147
    if (proj == "resampler") {
      const auto size = U32("clip.vision.image_size");
      if (size && *size <= kIntMax && *size / *patch > 1024) {
        ctx_.sink.Add(RuleId::kClipPatchGrid, OffsetOf("clip.vision.image_size"),
                      absl::StrCat("clip.vision.image_size ", *size, " is ", *size / *patch,
                                   " patches a side: llama.cpp's clip code fills a 1024-entry stack array per patch row "
                                   "and column of a minicpmv image slice, and writes past it"));
      }
    } else if (proj == "youtuvl") {
      const auto window = U32("clip.vision.window_size");
      const KeyValue* layers = keys_.Find("clip.vision.wa_layer_indexes");
      if (!window || *window == 0 || *window > kIntMax || layers == nullptr) return;
      if (layers->value().array.count == 0) return;  // no window attention
      if (*window / *patch / 2 != 0) return;
      ctx_.sink.Add(RuleId::kClipPatchGrid, OffsetOf("clip.vision.window_size"),
                    absl::StrCat("clip.vision.window_size ", *window, " is under two patches of ", *patch,
                                 ": llama.cpp's clip code steps its window loop by 0 and never ends on the first image"));
    }
  }

  RuleContext& ctx_;
  const KeyIndex& keys_;
};

}  // namespace

bool IsClipProjector(const KeyIndex& keys) {
  if (keys.arch() == "clip") return true;
  return keys.arch().empty() &&
         (keys.Find("clip.has_vision_encoder") != nullptr || keys.Find("clip.has_audio_encoder") != nullptr);
}

void CheckClipProjector(RuleContext& ctx, const KeyIndex& keys) {
  if (!IsClipProjector(keys)) return;
  ClipChecker(ctx, keys).Run();
}

}  // namespace ggufguard
