// What literal text is (see text_kinds.h). One pass marks the bytes that
// are structure (special tokens, tags, bracketed markers, role headers);
// the words are counted in what is left; each unexpected kind is a search
// of its own over the whole text (a URL inside a tag is still a URL).
#include "ggufguard/template/text_kinds.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "ggufguard/base/text.h"

namespace ggufguard::jinja {
namespace {

constexpr size_t kNpos = std::string_view::npos;
constexpr std::string_view kFullwidthBar = "\xef\xbd\x9c";  // U+FF5C, DeepSeek's <｜User｜>

// ASCII only: markers, schemes and commands are ASCII, and a folded copy
// keeps every byte's offset.
char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAsciiAlnum(char c) { return IsAsciiLetter(c) || IsAsciiDigit(c); }

std::string LowerCopy(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

// A case-insensitive search: `lowered` is the text through LowerCopy, the
// needle is lower case. One fold of the text serves every needle, and find
// runs at memchr's speed (a byte-at-a-time fold per needle was most of the
// cost of judging a template's text).
size_t FindNoCase(std::string_view lowered, std::string_view needle, size_t from = 0) {
  return needle.empty() ? kNpos : lowered.find(needle, from);
}

// A role by the name a marker or header gives it (lower case).
Role RoleOfName(std::string_view n) {
  static constexpr std::pair<std::string_view, Role> kNames[] = {
      {"system", Role::kSystem},        {"developer", Role::kSystem},     {"system_token", Role::kSystem},
      {"<<sys>>", Role::kSystem},       {"system_prompt", Role::kSystem}, {"available_tools", Role::kSystem},
      {"user", Role::kUser},            {"human", Role::kUser},           {"user_token", Role::kUser},
      {"prompter", Role::kUser},        {"inst", Role::kUser},            {"<</sys>>", Role::kUser},
      {"instruction", Role::kUser},     {"input", Role::kUser},           {"question", Role::kUser},
      {"assistant", Role::kAssistant},  {"model", Role::kAssistant},      {"bot", Role::kAssistant},
      {"chatbot", Role::kAssistant},    {"chatbot_token", Role::kAssistant}, {"/inst", Role::kAssistant},
      {"response", Role::kAssistant},   {"answer", Role::kAssistant},     {"gpt", Role::kAssistant},
      {"tool_calls", Role::kAssistant}, {"tool", Role::kTool},            {"ipython", Role::kTool},
      {"function", Role::kTool},        {"functions", Role::kTool},       {"observation", Role::kTool},     {"tool_results", Role::kTool},
      {"tool_response", Role::kTool},
  };
  for (const auto& [name, role] : kNames) {
    if (n == name) return role;
  }
  return Role::kNone;
}

// Tokens after which a role is spelled: `<|im_start|>user`,
// `<|start_header_id|>user<|end_header_id|>`, `<start_of_turn>model`,
// `<|start|>user`, `<|turn>user`.
bool OpensHeader(std::string_view lowered_inner) {
  return lowered_inner == "im_start" || lowered_inner == "start_header_id" || lowered_inner == "start_of_turn" ||
         lowered_inner == "start" || lowered_inner == "turn" || lowered_inner == "start_of_role";
}

// Tokens that close a turn.
bool EndsTurn(std::string_view lowered_inner) {
  static constexpr std::string_view kEnds[] = {"im_end",      "eot_id",         "end",          "end_of_turn",
                                               "/s",          "end_of_text",    "eom_id",       "end_of_turn_token",
                                               "endoftext",   "end▁of▁sentence", "turn|",        "end_of_message",
                                               "im_sep"};
  return std::find(std::begin(kEnds), std::end(kEnds), lowered_inner) != std::end(kEnds);
}

// Elements that load or run something: markup whatever their attributes.
bool IsActiveElement(std::string_view lowered) {
  static constexpr std::string_view kElements[] = {"script", "iframe", "object", "embed",  "form",     "meta",
                                                   "link",   "base",   "svg",    "style",  "frame",    "frameset",
                                                   "applet", "body",   "html",   "input",  "textarea", "math"};
  return std::find(std::begin(kElements), std::end(kElements), lowered) != std::end(kElements);
}

// Symbols and emoji (a variation selector or joiner after one is emoji).
bool IsSymbol(uint32_t cp) { return (cp >= 0x2000 && cp <= 0x2BFF) || (cp >= 0x1F000 && cp <= 0x1FAFF); }

bool IsLetterCodePoint(uint32_t cp) {
  if (cp < 0x80) return IsAsciiLetter(static_cast<char>(cp));
  return (cp >= 0xC0 && cp <= 0x24F && cp != 0xD7 && cp != 0xF7) || (cp >= 0x370 && cp <= 0x58F) ||
         (cp >= 0x600 && cp <= 0x6FF) || (cp >= 0x900 && cp <= 0xDFF) || (cp >= 0x1E00 && cp <= 0x1FFF) ||
         IsWideLetter(cp);
}

}  // namespace

bool IsWideLetter(uint32_t cp) {
  return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x3400 && cp <= 0x9FFF) || (cp >= 0xAC00 && cp <= 0xD7AF);
}

const char* RoleName(Role role) {
  switch (role) {
    case Role::kNone: return "none";
    case Role::kSystem: return "system";
    case Role::kUser: return "user";
    case Role::kAssistant: return "assistant";
    case Role::kTool: return "tool";
    case Role::kOwn: return "message's own";
  }
  return "none";
}

bool IsInvisibleCodePoint(uint32_t cp) {
  return cp == 0xAD || cp == 0x34F || cp == 0x61C || cp == 0x115F || cp == 0x1160 || cp == 0x17B4 ||
         cp == 0x17B5 || (cp >= 0x180B && cp <= 0x180F) || (cp >= 0x200B && cp <= 0x200F) ||
         (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2060 && cp <= 0x206F) || cp == 0x3164 ||
         (cp >= 0xFE00 && cp <= 0xFE0F) || cp == 0xFEFF || cp == 0xFFA0 || (cp >= 0xFFF9 && cp <= 0xFFFB) ||
         (cp >= 0x1BCA0 && cp <= 0x1BCA3) || (cp >= 0x1D173 && cp <= 0x1D17A) || (cp >= 0xE0000 && cp <= 0xE007F) ||
         (cp >= 0xE0100 && cp <= 0xE01EF);
}

namespace {

struct Marker {
  size_t end = 0;          // one past the marker
  std::string inner;       // its name, lower case ("im_start", "/inst", "user")
  bool token = false;      // <|...|> or <｜...｜>
  bool tag = false;        // <name>, </name>, <name/>
};

// A marker starting at s[i]: <|name|>, <｜name｜>, <name>, </name>,
// <name/>, <<SYS>>, <</SYS>>, [NAME], [/NAME]. Names hold no space.
bool MarkerAt(std::string_view s, size_t i, Marker* m) {
  auto name_end = [&](size_t from, auto ok) {
    size_t j = from;
    while (j < s.size() && j - from < 64 && ok(s[j])) ++j;
    return j;
  };
  auto token_char = [](char c) { return IsAsciiAlnum(c) || c == '_' || c == '-' || c == '.' || c == ':' || c == '/' || c == '#' || c == '='; };
  if (s.substr(i, 2) == "<|") {
    const size_t j = name_end(i + 2, [&](char c) { return c != '|' && c != '<' && c != '>' && !std::isspace(static_cast<unsigned char>(c)); });
    if (j > i + 2 && s.substr(j, 2) == "|>") {
      *m = {j + 2, LowerCopy(s.substr(i + 2, j - i - 2)), true, false};
      return true;
    }
    if (j > i + 2 && s.substr(j, 1) == ">") {  // Gemma 4's <|turn>
      *m = {j + 1, LowerCopy(s.substr(i + 2, j - i - 2)), true, false};
      return true;
    }
    return false;
  }
  if (s.substr(i, 1 + kFullwidthBar.size()) == std::string("<").append(kFullwidthBar)) {
    const size_t from = i + 1 + kFullwidthBar.size();
    const size_t close = s.find(std::string(kFullwidthBar).append(">"), from);
    if (close != kNpos && close - from <= 64 && s.substr(from, close - from).find_first_of(" \n\t<>") == kNpos) {
      *m = {close + kFullwidthBar.size() + 1, LowerCopy(s.substr(from, close - from)), true, false};
      return true;
    }
    return false;
  }
  if (s.substr(i, 3) == "<<<") {  // TranslateGemma's <<<source>>>
    size_t from = i + 3;
    const size_t j = name_end(from, token_char);
    if (j > from && s.substr(j, 3) == ">>>") {
      *m = {j + 3, LowerCopy(s.substr(i, j + 3 - i)), false, false};
      return true;
    }
    return false;
  }
  if (s.substr(i, 2) == "<<" || s.substr(i, 3) == "<</") {
    const size_t from = i + (s.substr(i, 3) == "<</" ? 3 : 2);
    const size_t j = name_end(from, [](char c) { return c >= 'A' && c <= 'Z'; });
    if (j > from && s.substr(j, 2) == ">>") {
      *m = {j + 2, LowerCopy(s.substr(i, j + 2 - i)), false, true};
      return true;
    }
    return false;
  }
  if (s[i] == '<') {
    size_t from = i + 1;
    if (from < s.size() && s[from] == '/') ++from;
    if (from >= s.size() || !IsAsciiLetter(s[from])) return false;
    size_t j = name_end(from, token_char);
    if (j + 1 < s.size() && s[j] == '|' && s[j + 1] == '>') {  // Gemma 4's <channel|>, <turn|>
      *m = {j + 2, LowerCopy(s.substr(from, j - from)) + "|", true, false};
      return true;
    }
    if (j < s.size() && s[j] == '/') ++j;
    if (j < s.size() && s[j] == '>') {
      *m = {j + 1, LowerCopy(s.substr(i + 1, j - i - 1)), false, true};
      return true;
    }
    return false;
  }
  if (s[i] == '[') {
    size_t from = i + 1;
    if (from < s.size() && s[from] == '/') ++from;
    // [INST], [TOOL_CALLS], [BEGIN FINAL RESPONSE]: upper case, digits, _ and spaces.
    const size_t j = name_end(from, [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ' '; });
    if (j > from && s[from] >= 'A' && s[from] <= 'Z' && j < s.size() && s[j] == ']') {
      *m = {j + 1, LowerCopy(s.substr(i + 1, j - i - 1)), false, false};
      return true;
    }
  }
  return false;
}

// A plain-text header at a line's start: `### Instruction:`, `USER:`,
// `GPT4 Correct Assistant:`, `Human:`. Returns its end and role.
bool PlainHeaderAt(std::string_view s, size_t i, size_t* end, Role* role) {
  size_t j = i;
  while (j < s.size() && s[j] == '#') ++j;
  while (j < s.size() && s[j] == ' ') ++j;
  if (s.substr(j, 13) == "GPT4 Correct ") j += 13;
  const size_t from = j;
  while (j < s.size() && j - from < 16 && IsAsciiLetter(s[j])) ++j;
  if (j == from || j >= s.size() || s[j] != ':') return false;
  const Role r = RoleOfName(LowerCopy(s.substr(from, j - from)));
  if (r == Role::kNone) return false;
  *end = j + 1;
  *role = r;
  return true;
}

// Top-level domains a bare domain is recognised by: the common ones and
// those phishing favours. None added that is mostly a file extension or a
// word a sentence ends on ("install.sh", "libfoo.so", "run.pl", "a.zip",
// "sound.au", "log in", "do it"); .cc, .ai and .app predate that rule and
// stay, being far more often domains.
constexpr std::string_view kTlds[] = {
    "com", "net",   "org", "io",  "ai",  "ru",   "cn",    "xyz",   "top",  "info", "biz",  "co",   "app", "dev",
    "site", "online", "link", "click", "tk", "pw", "cc",  "su",    "onion", "gov", "edu",  "uk",   "de",  "me",
    "us",  "ca",    "fr",  "jp",  "br",  "es",   "nl",    "ch",    "tv",   "ws",   "gg",   "eu",   "ua",  "ir",
    "page", "cloud", "shop", "live", "bank", "finance", "support"};

// An IPv4 address followed by a path or a port (`93.184.216.34/auth`):
// four numbers of at most 255 joined by dots, not inside a longer run.
size_t FindIpUrl(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!IsAsciiDigit(s[i]) || (i > 0 && (IsAsciiAlnum(s[i - 1]) || s[i - 1] == '.'))) continue;
    size_t j = i;
    int parts = 0;
    for (; parts < 4; ++parts) {
      const size_t from = j;
      int value = 0;
      while (j < s.size() && IsAsciiDigit(s[j]) && j - from < 3) value = value * 10 + (s[j++] - '0');
      if (j == from || value > 255 || (j < s.size() && IsAsciiDigit(s[j]))) break;
      if (parts < 3) {
        if (j >= s.size() || s[j] != '.') break;
        ++j;
      }
    }
    if (parts == 4 && j + 1 < s.size() && (s[j] == '/' || s[j] == ':') && IsAsciiAlnum(s[j + 1])) return i;
  }
  return kNpos;
}

// `s` is lowered (FindNoCase).
size_t FindUrl(std::string_view s) {
  size_t best = kNpos;
  // Schemes, defanged ones (hxxps://, a dot written [.]), a link with no
  // scheme in Markdown (`![](//host/p)`), and full-width letters.
  for (std::string_view p : {"http://", "https://", "ftp://", "javascript:", "data:text", "data:image", "file://",
                             "hxxp://", "hxxps://", "[.]", "](//", "\xef\xbd\x88\xef\xbd\x94\xef\xbd\x94\xef\xbd\x90", "\xef\xbc\xa8\xef\xbc\xb4\xef\xbc\xb4\xef\xbc\xb0"}) {
    best = std::min(best, FindNoCase(s, p));
  }
  best = std::min(best, FindIpUrl(s));
  for (size_t at = FindNoCase(s, "www."); at != kNpos; at = FindNoCase(s, "www.", at + 1)) {
    if ((at == 0 || !IsAsciiAlnum(s[at - 1])) && at + 4 < s.size() && IsAsciiAlnum(s[at + 4])) {
      best = std::min(best, at);
      break;
    }
  }
  // A bare domain: labels of [A-Za-z0-9-] joined by dots, the last one a
  // top-level domain, not followed by a letter ("e.g." and "config.json" are not).
  for (size_t i = 0; i < s.size() && i < best; ++i) {
    if (!IsAsciiAlnum(s[i]) || (i > 0 && (IsAsciiAlnum(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '-'))) continue;
    size_t j = i, last_dot = kNpos;
    while (j < s.size() && (IsAsciiAlnum(s[j]) || s[j] == '-' || (s[j] == '.' && j + 1 < s.size() && IsAsciiAlnum(s[j + 1])))) {
      if (s[j] == '.') last_dot = j;
      ++j;
    }
    if (last_dot == kNpos || last_dot == i) continue;
    const std::string tld = LowerCopy(s.substr(last_dot + 1, j - last_dot - 1));
    // An e-mail address's domain (Devstral's git identity) is not a link.
    const bool email = i > 0 && s[i - 1] == '@';
    if (!email && std::find(std::begin(kTlds), std::end(kTlds), tld) != std::end(kTlds)) {
      best = std::min(best, i);
    }
  }
  return best;
}

// Markup: a tag of an element that loads or runs something, or any tag
// with an attribute (`<img src=`, `<a href=`). Sets *script for <script,
// javascript: and on...= handlers. `s` is lowered (FindNoCase).
size_t FindMarkup(std::string_view s, bool* script) {
  *script = false;
  size_t first = kNpos;
  for (size_t i = s.find('<'); i != kNpos; i = s.find('<', i + 1)) {
    size_t j = i + 1;
    if (j < s.size() && s[j] == '/') ++j;
    const size_t from = j;
    while (j < s.size() && IsAsciiAlnum(s[j])) ++j;
    if (j == from) continue;
    const std::string name = LowerCopy(s.substr(from, j - from));
    // Any attribute that loads, links or runs (`<img src=`, `<a href=`,
    // `onerror=`); tool-call tags of real templates have others
    // (`<invoke name="...">`, `<turn role="...">`).
    bool attribute = false;
    for (size_t k = j; k < s.size() && s[k] != '>' && s[k] != '<' && k - j < 512;) {
      if (!std::isspace(static_cast<unsigned char>(s[k]))) {
        ++k;
        continue;
      }
      while (k < s.size() && std::isspace(static_cast<unsigned char>(s[k]))) ++k;
      const size_t attr_from = k;
      while (k < s.size() && (IsAsciiLetter(s[k]) || s[k] == '-' || s[k] == ':')) ++k;
      if (k >= s.size() || s[k] != '=' || k == attr_from) continue;
      const std::string attr = LowerCopy(s.substr(attr_from, k - attr_from));
      const bool handler = attr.size() > 2 && attr.starts_with("on");
      if (handler) *script = true;
      if (handler || attr == "src" || attr == "href" || attr == "action" || attr == "formaction" || attr == "srcdoc" ||
          attr == "style" || attr == "background" || attr == "poster" || attr == "xlink:href" || attr == "data") {
        attribute = true;
      }
    }
    if (IsActiveElement(name) || attribute) {
      if (name == "script") *script = true;
      first = std::min(first, i);
    }
  }
  if (FindNoCase(s, "javascript:") != kNpos) {
    *script = true;
    first = std::min(first, FindNoCase(s, "javascript:"));
  }
  return first;
}

// `s` is lowered (FindNoCase).
size_t FindCommand(std::string_view s) {
  static constexpr std::string_view kCommands[] = {
      "curl http", "curl -", "wget http", "wget -", "rm -rf", "sudo ",     "chmod +x", "chmod 777", "bash -c",
      "sh -c ",    "| sh",   "|sh",       "| bash", "|bash",  "/bin/sh",   "/bin/bash", "nc -e",    "powershell",
      "cmd.exe",   "cmd /c", "python -c", "python3 -c", "base64 -d", "base64 --decode", "/dev/tcp/", "mkfifo",
      "invoke-webrequest", "invoke-expression", "iex(", "$(curl", "`curl", "os.system(", "subprocess.",
      "certutil -urlcache", "mshta ", "rundll32", "<(curl", "<(wget", "| iex", "|iex", "iwr http", "iwr -",
      "irm http"};
  size_t best = kNpos;
  for (std::string_view c : kCommands) best = std::min(best, FindNoCase(s, c));
  return best;
}

// A run of 40 or more base64 characters holding a digit and both cases, or
// of 48 or more hex digits holding a digit and a letter.
size_t FindBlob(std::string_view s) {
  auto b64 = [](char c) { return IsAsciiAlnum(c) || c == '+' || c == '/' || c == '='; };
  for (size_t i = 0; i < s.size();) {
    if (!b64(s[i])) {
      ++i;
      continue;
    }
    size_t j = i;
    bool digit = false, upper = false, lower = false, hex = true;
    while (j < s.size() && b64(s[j])) {
      const char c = s[j];
      digit |= c >= '0' && c <= '9';
      upper |= c >= 'A' && c <= 'Z';
      lower |= c >= 'a' && c <= 'z';
      hex &= std::isxdigit(static_cast<unsigned char>(c)) != 0;
      ++j;
    }
    const size_t n = j - i;
    if ((n >= 40 && digit && upper && lower) || (n >= 48 && hex && digit && (upper || lower))) return i;
    i = j;
  }
  return kNpos;
}

}  // namespace

TextReading ReadText(std::string_view s) {
  TextReading r;
  std::vector<bool> structure(s.size(), false);
  auto mark = [&](size_t from, size_t to) {
    for (size_t k = from; k < to && k < s.size(); ++k) structure[k] = true;
  };
  auto add_header = [&](size_t at, Role role) {
    if (r.headers.size() < kMaxHeaders) r.headers.push_back({at, role});
    r.kinds |= kTextRoleHeader;
  };
  for (size_t i = 0; i < s.size();) {
    const bool line_start = i == 0 || s[i - 1] == '\n';
    size_t end = 0;
    Role role = Role::kNone;
    if (line_start && PlainHeaderAt(s, i, &end, &role)) {
      add_header(i, role);
      mark(i, end);
      i = end;
      continue;
    }
    Marker m;
    if ((s[i] == '<' || s[i] == '[') && MarkerAt(s, i, &m)) {
      const std::string_view lowered(m.inner);
      // A tag of an element that loads or runs something is markup, not structure.
      std::string element(lowered.substr(lowered.starts_with("/") ? 1 : 0));
      if (!element.empty() && element.back() == '/') element.pop_back();
      if (m.tag && IsActiveElement(element)) {
        i = m.end;
        continue;
      }
      if (m.token) {
        r.kinds |= kTextSpecialToken;
        if (r.tokens.size() < kMaxTokens) r.tokens.push_back({i, m.end - i});
      }
      if (EndsTurn(m.inner)) r.turn_end = i;
      mark(i, m.end);
      std::string name(lowered);
      for (std::string_view suffix : {"_token"}) {
        if (name.ends_with(suffix) && RoleOfName(name) == Role::kNone) name.resize(name.size() - suffix.size());
      }
      // Tags name few roles (`<function=...>` and `<tool_call>` are inside
      // an assistant's turn); tokens and bracketed markers name any.
      const bool tag_role = !m.tag || name == "system" || name == "user" || name == "assistant" || name == "model" ||
                            name == "human" || name == "<<sys>>" || name == "<</sys>>";
      // A tool's output marked inside another turn (<tool_response>,
      // DeepSeek's <｜tool▁output▁begin｜> and <result>) is the tool's.
      const bool tool_output = !name.starts_with("/") && name.find("end") == std::string::npos &&
                               (name.find("tool_response") != std::string::npos || name.find("output") != std::string::npos ||
                                name.find("result") != std::string::npos || name == "observation");
      if (tool_output) {
        add_header(i, Role::kTool);
      } else if (Role named = RoleOfName(name); named != Role::kNone && tag_role) {
        add_header(i, named);
      } else if ((m.token || m.tag) && OpensHeader(name)) {
        size_t j = m.end;
        while (j < s.size() && (IsAsciiLetter(s[j]) || s[j] == '_')) ++j;
        const Role spelled = RoleOfName(LowerCopy(s.substr(m.end, j - m.end)));
        if (spelled != Role::kNone) {
          add_header(i, spelled);
          mark(m.end, j);
          i = j;
          continue;
        }
        if (s.substr(m.end).find_first_not_of(" \t\n") == kNpos) r.open_header = true;
      }
      i = m.end;
      continue;
    }
    ++i;
  }
  // Words in what is not structure; invisible code points anywhere.
  double words = 0;
  size_t run = 0, wide = 0;
  auto end_word = [&](size_t at) {
    if (run >= 2 || wide > 0) {
      words += run >= 2 ? 1 : 0;
      words += static_cast<double>(wide) / 2;
      if (r.prose_at == kNpos) r.prose_at = at;
    }
    run = wide = 0;
  };
  size_t word_start = 0;
  uint32_t previous = 0;
  for (size_t i = 0; i < s.size();) {
    const Utf8Sequence u = DecodeUtf8At(s, i);
    const size_t len = u.length == 0 ? 1 : u.length;
    const uint32_t before = previous;
    previous = u.length == 0 ? 0 : u.code_point;
    // Emoji presentation (U+FE0F after a symbol) and joiners between emoji
    // are how emoji are written, not hidden text.
    const bool emoji = (u.code_point == 0xFE0F || u.code_point == 0xFE0E || u.code_point == 0x200D) && IsSymbol(before);
    if (u.length != 0 && IsInvisibleCodePoint(u.code_point) && !emoji) {
      if (r.invisible_at == kNpos) {
        r.invisible_at = i;
        r.invisible_code_point = u.code_point;
      }
      r.kinds |= kTextInvisible;
      i += len;
      continue;  // an invisible character inside a word does not split it
    }
    if (!structure[i] && u.length != 0 && (IsLetterCodePoint(u.code_point) || (u.code_point >= '0' && u.code_point <= '9'))) {
      ++r.loose;
    }
    // An identifier (`file_placeholder_`, `tool_calls`) is one word.
    if (!structure[i] && u.length != 0 && (IsLetterCodePoint(u.code_point) || (u.code_point == '_' && run > 0))) {
      if (run == 0 && wide == 0) word_start = i;
      if (IsWideLetter(u.code_point)) ++wide;
      else ++run;
    } else {
      end_word(word_start);
    }
    i += len;
  }
  end_word(word_start);
  r.words = static_cast<size_t>(words);
  if (r.words >= 2) r.kinds |= kTextProse;
  const std::string lowered = LowerCopy(s);
  if ((r.url_at = FindUrl(lowered)) != kNpos) r.kinds |= kTextUrl;
  bool script = false;
  if ((r.markup_at = FindMarkup(lowered, &script)) != kNpos) r.kinds |= kTextMarkup;
  if (script) r.kinds |= kTextScript;
  if ((r.command_at = FindCommand(lowered)) != kNpos) r.kinds |= kTextCommand;
  if ((r.blob_at = FindBlob(s)) != kNpos) r.kinds |= kTextBlob;
  return r;
}

std::vector<const char*> TextKindNames(uint16_t kinds) {
  static constexpr std::pair<uint16_t, const char*> kNames[] = {
      {kTextProse, "prose"}, {kTextUrl, "url"},         {kTextMarkup, "markup"},
      {kTextScript, "script"}, {kTextCommand, "command"}, {kTextBlob, "blob"},
      {kTextInvisible, "invisible"}, {kTextSpecialToken, "special-token"}, {kTextRoleHeader, "role-header"}};
  std::vector<const char*> out;
  for (const auto& [bit, name] : kNames) {
    if (kinds & bit) out.push_back(name);
  }
  return out;
}

bool HoldsHeaderOrToken(std::string_view text) {
  return (ReadText(text).kinds & (kTextSpecialToken | kTextRoleHeader)) != 0;
}

bool IsTagWord(std::string_view t) {
  return t.find('_') != std::string_view::npos &&
         std::all_of(t.begin(), t.end(), [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; });
}

bool IsStructuralMarker(std::string_view text) {
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  for (std::string_view sw : {"/think", "/no_think", "/nothink", "/system_override"}) {
    if (t == sw) return true;
  }
  if (t.empty()) return true;
  if (IsTagWord(t)) return true;
  // A piece of a tag built around an id (`'<file_placeholder_' ~ f.id ~ '>'`).
  auto identifier = [](std::string_view x) {
    return !x.empty() && std::all_of(x.begin(), x.end(), [](char c) {
      return IsAsciiAlnum(c) || c == '_' || c == '-' || c == ':' || c == '.' || c == '|' || c == '=';
    });
  };
  if ((t.front() == '<' && identifier(t.substr(t.size() > 1 && t[1] == '/' ? 2 : 1))) ||
      (t.back() == '>' && identifier(t.substr(0, t.size() - 1)))) {
    return true;
  }
  const TextReading r = ReadText(t);
  if (r.kinds & (kTextUnexpected | kTextInvisible)) return false;
  // Structure only: no letter or digit outside markers and headers
  // (punctuation is structure; a bare word, however short, is not).
  return r.words == 0 && r.loose == 0;
}

}  // namespace ggufguard::jinja
