// The normal form of a chat template (fingerprint.h): one walk of the lexer's
// tokens, each segment appended to the form as a record (kind, length,
// content), so that the form of a template is a function of its segments
// and nothing else.
#include "ggufguard/template/fingerprint.h"

#include <nettle/sha2.h>

#include <algorithm>
#include <cstring>

#include "ggufguard/template/lexer.h"

namespace ggufguard {
namespace {

using jinja::Lexer;
using jinja::Tok;
using jinja::Token;

constexpr size_t kNpos = std::string_view::npos;

bool IsAsciiSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

void AppendLength(std::string& out, uint64_t n) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
}

// One item inside a tag's record: its lexer kind, then its bytes.
void AppendItem(std::string& out, uint8_t tag, std::string_view bytes) {
  out.push_back(static_cast<char>(tag));
  AppendLength(out, bytes.size());
  out.append(bytes);
}

class Normalizer {
 public:
  explicit Normalizer(std::string_view tmpl) : s_(tmpl) {}

  NormalForm Run() {
    Lexer lexer(s_);
    uint64_t text_end = 0;  // where the last construct the lexer returned in text state ended
    for (;;) {
      Token t = lexer.Next();
      if (t.kind == Tok::kEof) {
        Gap(text_end, s_.size());
        break;
      }
      Gap(text_end, t.offset);
      if (t.kind == Tok::kData) {
        Text(t.offset, t.offset + t.text.size());
        text_end = t.offset + t.text.size();
        continue;
      }
      if (t.kind == Tok::kError) {
        Unlexed(t.offset);
        break;
      }
      // {{ or {%: every token up to its closer is one segment.
      const bool block = t.kind == Tok::kBlockBegin;
      const uint64_t begin = t.offset;
      BeginSegment(block ? SegmentKind::kStatement : SegmentKind::kOutput, begin);
      AppendItem(out_.form, static_cast<uint8_t>(t.kind), t.text);
      uint64_t prev_end = t.offset + t.text.size();
      bool first_name = true;
      bool closed = false;
      for (;;) {
        Token in = lexer.Next();
        if (in.kind == Tok::kError || in.kind == Tok::kEof) {
          EndSegment(in.offset);
          if (in.kind == Tok::kError) Unlexed(in.offset);
          break;
        }
        // What separates two tokens: ASCII whitespace is no part of the
        // form; anything else the lexer skipped (Unicode spaces) is.
        const std::string_view between = s_.substr(prev_end, in.offset - prev_end);
        if (std::any_of(between.begin(), between.end(), [](char c) { return !IsAsciiSpace(c); })) {
          AppendItem(out_.form, 0xff, between);
        }
        AppendItem(out_.form, static_cast<uint8_t>(in.kind), in.text);
        prev_end = in.offset + in.text.size();
        if (block && first_name && in.kind == Tok::kName) {
          out_.segments.back().kind = StatementKind(in.text);
          out_.form[out_.segments.back().form_begin] = static_cast<char>(out_.segments.back().kind);
        }
        first_name = false;
        if (in.kind == Tok::kVarEnd || in.kind == Tok::kBlockEnd) {
          EndSegment(prev_end);
          closed = true;
          break;
        }
      }
      if (!closed) return std::move(out_);
      text_end = prev_end;
    }
    return std::move(out_);
  }

 private:
  static SegmentKind StatementKind(std::string_view name) {
    if (name == "if" || name == "elif") return SegmentKind::kCondition;
    if (name == "else") return SegmentKind::kElse;
    if (name == "for") return SegmentKind::kLoop;
    if (name == "set") return SegmentKind::kSet;
    if (name == "macro" || name == "call") return SegmentKind::kMacro;
    if (name.starts_with("end")) return SegmentKind::kEnd;
    return SegmentKind::kStatement;
  }

  void BeginSegment(SegmentKind kind, uint64_t offset) {
    out_.segments.push_back({kind, offset, 0, out_.form.size(), 0});
    out_.form.push_back(static_cast<char>(kind));
    AppendLength(out_.form, 0);  // patched by EndSegment
  }
  void EndSegment(uint64_t end) {
    TemplateSegment& seg = out_.segments.back();
    seg.length = end - seg.offset;
    seg.form_length = out_.form.size() - seg.form_begin;
    const uint64_t content = seg.form_length - 9;
    for (int i = 0; i < 8; ++i) out_.form[seg.form_begin + 1 + i] = static_cast<char>((content >> (8 * i)) & 0xff);
  }

  // Literal text [begin, end): one segment per line, \r\n and \r read as \n;
  // text that is only whitespace (the indentation and newlines between the
  // tags of a template written over many lines) is one segment.
  void Text(uint64_t begin, uint64_t end) {
    const std::string_view text = s_.substr(begin, end - begin);
    if (std::all_of(text.begin(), text.end(), IsAsciiSpace)) {
      BeginSegment(SegmentKind::kText, begin);
      for (uint64_t i = begin; i < end; ++i) {
        if (s_[i] == '\r' && i + 1 < end && s_[i + 1] == '\n') continue;
        out_.form.push_back(s_[i] == '\r' ? '\n' : s_[i]);
      }
      EndSegment(end);
      return;
    }
    uint64_t i = begin;
    while (i < end) {
      BeginSegment(SegmentKind::kText, i);
      uint64_t j = i;
      while (j < end && s_[j] != '\n' && s_[j] != '\r') ++j;
      out_.form.append(s_.substr(i, j - i));
      if (j < end) {
        out_.form.push_back('\n');
        j += (s_[j] == '\r' && j + 1 < end && s_[j + 1] == '\n') ? 2 : 1;
      }
      EndSegment(j);
      i = j;
    }
  }

  // What the lexer skipped in text state: comments and the tags around a
  // raw block's body. Each is a segment of its whitespace-control marks.
  void Gap(uint64_t begin, uint64_t end) {
    uint64_t i = begin;
    while (i < end) {
      const std::string_view rest = s_.substr(i, end - i);
      const bool comment = rest.starts_with("{#");
      const size_t close = comment ? rest.find("#}", 2) : rest.starts_with("{%") ? rest.find("%}", 2) : kNpos;
      if (close == kNpos) {  // not what the lexer skips: kept whole
        BeginSegment(SegmentKind::kUnlexed, i);
        out_.form.append(rest);
        EndSegment(end);
        return;
      }
      const uint64_t stop = i + close + 2;
      BeginSegment(comment ? SegmentKind::kComment : SegmentKind::kRaw, i);
      const char open_mark = rest.size() > 2 ? rest[2] : ' ';
      const char close_mark = close > 2 ? rest[close - 1] : ' ';
      out_.form.push_back(open_mark == '-' || open_mark == '+' ? open_mark : ' ');
      out_.form.push_back(close_mark == '-' || close_mark == '+' ? close_mark : ' ');
      if (!comment) {  // raw or endraw: the word, for a reader of the form
        for (char c : rest.substr(2, close - 2)) {
          if (!IsAsciiSpace(c) && c != '-' && c != '+') out_.form.push_back(c);
        }
      }
      EndSegment(stop);
      i = stop;
    }
  }

  void Unlexed(uint64_t from) {
    if (from >= s_.size()) return;
    BeginSegment(SegmentKind::kUnlexed, from);
    out_.form.append(s_.substr(from));
    EndSegment(s_.size());
  }

  std::string_view s_;
  NormalForm out_;
};

void Sha256Of(std::string_view data, uint8_t (&md)[SHA256_DIGEST_SIZE]) {
  sha256_ctx ctx;
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(), reinterpret_cast<const uint8_t*>(data.data()));
  sha256_digest(&ctx, SHA256_DIGEST_SIZE, md);
}

}  // namespace

const char* SegmentKindName(SegmentKind kind) {
  switch (kind) {
    case SegmentKind::kText: return "text";
    case SegmentKind::kOutput: return "output";
    case SegmentKind::kCondition: return "condition";
    case SegmentKind::kElse: return "else";
    case SegmentKind::kLoop: return "loop";
    case SegmentKind::kSet: return "set";
    case SegmentKind::kMacro: return "macro";
    case SegmentKind::kEnd: return "end";
    case SegmentKind::kStatement: return "statement";
    case SegmentKind::kComment: return "comment";
    case SegmentKind::kRaw: return "raw";
    case SegmentKind::kUnlexed: return "unlexed";
  }
  return "unlexed";
}

NormalForm NormalizeTemplate(std::string_view tmpl) {
  // Jinja2 drops one trailing newline of the source before it lexes it.
  if (tmpl.ends_with("\r\n")) {
    tmpl.remove_suffix(2);
  } else if (tmpl.ends_with('\n') || tmpl.ends_with('\r')) {
    tmpl.remove_suffix(1);
  }
  return Normalizer(tmpl).Run();
}

std::array<uint8_t, 16> NormalForm::Digest() const {
  uint8_t md[SHA256_DIGEST_SIZE];
  Sha256Of(form, md);
  std::array<uint8_t, 16> out;
  std::memcpy(out.data(), md, out.size());
  return out;
}

uint64_t NormalForm::SegmentHash(size_t i) const {
  const TemplateSegment& seg = segments[i];
  uint8_t md[SHA256_DIGEST_SIZE];
  Sha256Of(std::string_view(form).substr(seg.form_begin, seg.form_length), md);
  uint64_t h = 0;
  for (int k = 7; k >= 0; --k) h = (h << 8) | md[k];
  return h;
}

std::vector<uint64_t> NormalForm::SegmentHashes() const {
  std::vector<uint64_t> out(segments.size());
  for (size_t i = 0; i < segments.size(); ++i) out[i] = SegmentHash(i);
  return out;
}

uint8_t SegmentKindByte(std::string_view tmpl, const TemplateSegment& segment) {
  uint8_t kind = static_cast<uint8_t>(segment.kind);
  if (segment.kind == SegmentKind::kText) {
    const std::string_view text = tmpl.substr(segment.offset, segment.length);
    if (std::all_of(text.begin(), text.end(), IsAsciiSpace)) kind |= kWhitespaceOnlyBit;
  }
  return kind;
}

std::vector<uint32_t> SegmentSketch(const std::vector<uint64_t>& hashes) {
  std::vector<uint32_t> keys;
  keys.reserve(hashes.size());
  for (uint64_t h : hashes) keys.push_back(static_cast<uint32_t>(h >> 32));
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  if (keys.size() > kSketchSize) keys.resize(kSketchSize);
  return keys;
}

}  // namespace ggufguard
