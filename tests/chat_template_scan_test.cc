#include "ggufguard/template/scan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace ggufguard {
namespace {

using K = TemplateIssueKind;
using namespace std::string_literals;

std::string Dump(const std::vector<TemplateIssue>& issues) {
  std::string out;
  for (const auto& i : issues) {
    out += std::string(TemplateIssueKindName(i.kind)) + "@" + std::to_string(i.offset) + " " + i.detail + "\n";
  }
  return out;
}

size_t Count(const std::vector<TemplateIssue>& issues, K kind) {
  return std::count_if(issues.begin(), issues.end(), [&](const TemplateIssue& i) { return i.kind == kind; });
}

// Exactly one issue of `kind`, and nothing else.
void ExpectOnly(std::string_view tmpl, K kind, const TemplateScanOptions& opts = {}) {
  const auto issues = ScanChatTemplate(tmpl, opts);
  EXPECT_EQ(issues.size(), 1u) << tmpl << "\n" << Dump(issues);
  EXPECT_EQ(Count(issues, kind), 1u) << tmpl << "\n" << Dump(issues);
}

void ExpectHas(std::string_view tmpl, K kind) {
  const auto issues = ScanChatTemplate(tmpl);
  EXPECT_GE(Count(issues, kind), 1u) << tmpl << "\n" << Dump(issues);
}

void ExpectClean(std::string_view tmpl, const TemplateScanOptions& opts = {}) {
  const auto issues = ScanChatTemplate(tmpl, opts);
  EXPECT_TRUE(issues.empty()) << tmpl << "\n" << Dump(issues);
}

// ---------------------------------------------------------------------------
// Realistic copies of widely deployed templates: these must stay clean.

constexpr std::string_view kChatMlSimple =
    R"TPL({% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %})TPL";

constexpr std::string_view kQwen25 = R"TPL({%- if tools %}
    {{- '<|im_start|>system\n' }}
    {%- if messages[0]['role'] == 'system' %}
        {{- messages[0]['content'] }}
    {%- else %}
        {{- 'You are Qwen, created by Alibaba Cloud. You are a helpful assistant.' }}
    {%- endif %}
    {{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
    {%- for tool in tools %}
        {{- "\n" }}
        {{- tool | tojson }}
    {%- endfor %}
    {{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
    {%- if messages[0]['role'] == 'system' %}
        {{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}
    {%- else %}
        {{- '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' }}
    {%- endif %}
{%- endif %}
{%- for message in messages %}
    {%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
        {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
    {%- elif message.role == "assistant" %}
        {{- '<|im_start|>' + message.role }}
        {%- if message.content %}
            {{- '\n' + message.content }}
        {%- endif %}
        {%- for tool_call in message.tool_calls %}
            {%- if tool_call.function is defined %}
                {%- set tool_call = tool_call.function %}
            {%- endif %}
            {{- '\n<tool_call>\n{"name": "' }}
            {{- tool_call.name }}
            {{- '", "arguments": ' }}
            {{- tool_call.arguments | tojson }}
            {{- '}\n</tool_call>' }}
        {%- endfor %}
        {{- '<|im_end|>\n' }}
    {%- elif message.role == "tool" %}
        {%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}
            {{- '<|im_start|>user' }}
        {%- endif %}
        {{- '\n<tool_response>\n' }}
        {{- message.content }}
        {{- '\n</tool_response>' }}
        {%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}
            {{- '<|im_end|>\n' }}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\n' }}
{%- endif %}
)TPL";

constexpr std::string_view kLlama3 =
    R"TPL({% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %})TPL";

constexpr std::string_view kLlama31 = R"TPL({{- bos_token }}
{%- if custom_tools is defined %}
    {%- set tools = custom_tools %}
{%- endif %}
{%- if not tools_in_user_message is defined %}
    {%- set tools_in_user_message = true %}
{%- endif %}
{%- if not date_string is defined %}
    {%- if strftime_now is defined %}
        {%- set date_string = strftime_now("%d %b %Y") %}
    {%- else %}
        {%- set date_string = "26 Jul 2024" %}
    {%- endif %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}

{#- This block extracts the system message, so we can slot it into the right place. #}
{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content']|trim %}
    {%- set messages = messages[1:] %}
{%- else %}
    {%- set system_message = "" %}
{%- endif %}

{#- System message + builtin tools #}
{{- "<|start_header_id|>system<|end_header_id|>\n\n" }}
{%- if builtin_tools is defined or tools is not none %}
    {{- "Environment: ipython\n" }}
{%- endif %}
{%- if builtin_tools is defined %}
    {{- "Tools: " + builtin_tools | reject('equalto', 'code_interpreter') | join(", ") + "\n\n"}}
{%- endif %}
{{- "Cutting Knowledge Date: December 2023\n" }}
{{- "Today Date: " + date_string + "\n\n" }}
{%- if tools is not none and not tools_in_user_message %}
    {{- "You have access to the following functions. To call a function, please respond with JSON for a function call." }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
{%- endif %}
{{- system_message }}
{{- "<|eot_id|>" }}

{#- Custom tools are passed in a user message with some extra guidance #}
{%- if tools_in_user_message and not tools is none %}
    {#- Extract the first user message so we can plug it in here #}
    {%- if messages | length != 0 %}
        {%- set first_user_message = messages[0]['content']|trim %}
        {%- set messages = messages[1:] %}
    {%- else %}
        {{- raise_exception("Cannot put tools in the first user message when there's no first user message!") }}
{%- endif %}
    {{- '<|start_header_id|>user<|end_header_id|>\n\n' -}}
    {{- "Given the following functions, please respond with a JSON for a function call " }}
    {{- "with its proper arguments that best answers the given prompt.\n\n" }}
    {{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.' }}
    {{- "Do not use variables.\n\n" }}
    {%- for t in tools %}
        {{- t | tojson(indent=4) }}
        {{- "\n\n" }}
    {%- endfor %}
    {{- first_user_message + "<|eot_id|>"}}
{%- endif %}

{%- for message in messages %}
    {%- if not (message.role == 'ipython' or message.role == 'tool' or 'tool_calls' in message) %}
        {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' }}
    {%- elif 'tool_calls' in message %}
        {%- if not message.tool_calls|length == 1 %}
            {{- raise_exception("This model only supports single tool-calls at once!") }}
        {%- endif %}
        {%- set tool_call = message.tool_calls[0].function %}
        {%- if builtin_tools is defined and tool_call.name in builtin_tools %}
            {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
            {{- "<|python_tag|>" + tool_call.name + ".call(" }}
            {%- for arg_name, arg_val in tool_call.arguments | items %}
                {{- arg_name + '="' + arg_val + '"' }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- endif %}
                {%- endfor %}
            {{- ")" }}
        {%- else  %}
            {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' -}}
            {{- '{"name": "' + tool_call.name + '", ' }}
            {{- '"parameters": ' }}
            {{- tool_call.arguments | tojson }}
            {{- "}" }}
        {%- endif %}
        {%- if builtin_tools is defined %}
            {#- This means we're in ipython mode #}
            {{- "<|eom_id|>" }}
        {%- else %}
            {{- "<|eot_id|>" }}
        {%- endif %}
    {%- elif message.role == "tool" or message.role == "ipython" %}
        {{- "<|start_header_id|>ipython<|end_header_id|>\n\n" }}
        {%- if message.content is mapping or message.content is iterable %}
            {{- message.content | tojson }}
        {%- else %}
            {{- message.content }}
        {%- endif %}
        {{- "<|eot_id|>" }}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|start_header_id|>assistant<|end_header_id|>\n\n' }}
{%- endif %}
)TPL";

constexpr std::string_view kMistralV1 =
    R"TPL({{ bos_token }}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if message['role'] == 'user' %}{{ '[INST] ' + message['content'] + ' [/INST]' }}{% elif message['role'] == 'assistant' %}{{ message['content'] + eos_token}}{% else %}{{ raise_exception('Only user and assistant roles are supported!') }}{% endif %}{% endfor %})TPL";

constexpr std::string_view kMistralTools = R"TPL({%- if messages[0]["role"] == "system" %}
    {%- set system_message = messages[0]["content"] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}
{%- if not tools is defined %}
    {%- set tools = none %}
{%- endif %}
{%- set user_messages = loop_messages | selectattr("role", "equalto", "user") | list %}

{#- This block checks for alternating user/assistant messages, skipping tool calling messages #}
{%- set ns = namespace() %}
{%- set ns.index = 0 %}
{%- for message in loop_messages %}
    {%- if not (message.role == "tool" or message.role == "tool_results" or (message.tool_calls is defined and message.tool_calls is not none)) %}
        {%- if (message["role"] == "user") != (ns.index % 2 == 0) %}
            {{- raise_exception("After the optional system message, conversation roles must alternate user/assistant/user/assistant/...") }}
        {%- endif %}
        {%- set ns.index = ns.index + 1 %}
    {%- endif %}
{%- endfor %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if message["role"] == "user" %}
        {%- if tools is not none and (message == user_messages[-1]) %}
            {{- "[AVAILABLE_TOOLS] [" }}
            {%- for tool in tools %}
                {%- set tool = tool.function %}
                {{- '{"type": "function", "function": {' }}
                {%- for key, val in tool.items() if key != "return" %}
                    {%- if val is string %}
                        {{- '"' + key + '": "' + val + '"' }}
                    {%- else %}
                        {{- '"' + key + '": ' + val|tojson }}
                    {%- endif %}
                    {%- if not loop.last %}
                        {{- ", " }}
                    {%- endif %}
                {%- endfor %}
                {{- "}}" }}
                {%- if not loop.last %}
                    {{- ", " }}
                {%- else %}
                    {{- "]" }}
                {%- endif %}
            {%- endfor %}
            {{- "[/AVAILABLE_TOOLS]" }}
            {%- endif %}
        {%- if loop.last and system_message is defined %}
            {{- "[INST] " + system_message + "\n\n" + message["content"] + "[/INST]" }}
        {%- else %}
            {{- "[INST] " + message["content"] + "[/INST]" }}
        {%- endif %}
    {%- elif message.tool_calls is defined and message.tool_calls is not none %}
        {{- "[TOOL_CALLS] [" }}
        {%- for tool_call in message.tool_calls %}
            {%- set out = tool_call.function|tojson %}
            {{- out[:-1] }}
            {%- if not tool_call.id is defined or tool_call.id|length != 9 %}
                {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
            {%- endif %}
            {{- ', "id": "' + tool_call.id + '"}' }}
            {%- if not loop.last %}
                {{- ", " }}
            {%- else %}
                {{- "]" + eos_token }}
            {%- endif %}
        {%- endfor %}
    {%- elif message["role"] == "assistant" %}
        {{- " " + message["content"]|trim + eos_token}}
    {%- elif message["role"] == "tool_results" or message["role"] == "tool" %}
        {%- if message.content is defined and message.content.content is defined %}
            {%- set content = message.content.content %}
        {%- else %}
            {%- set content = message.content %}
        {%- endif %}
        {{- '[TOOL_RESULTS] {"content": ' + content|string + ", " }}
        {%- if not message.tool_call_id is defined or message.tool_call_id|length != 9 %}
            {{- raise_exception("Tool call IDs should be alphanumeric strings with length 9!") }}
        {%- endif %}
        {{- '"call_id": "' + message.tool_call_id + '"}[/TOOL_RESULTS]' }}
    {%- else %}
        {{- raise_exception("Only user and assistant roles are supported, with the exception of an initial optional system message!") }}
    {%- endif %}
{%- endfor %}
)TPL";

constexpr std::string_view kGemma =
    R"TPL({{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %})TPL";

constexpr std::string_view kPhi3 =
    R"TPL({% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %})TPL";

// DeepSeek-R1 style: namespace(), UTF-8 fullwidth bars, content.split().
constexpr std::string_view kDeepSeekR1 =
    R"TPL({% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{% set ns = namespace(is_first=false, is_tool=false, is_output_first=true, system_prompt='') %}{%- for message in messages %}{%- if message['role'] == 'system' %}{% set ns.system_prompt = message['content'] %}{%- endif %}{%- endfor %}{{bos_token}}{{ns.system_prompt}}{%- for message in messages %}{%- if message['role'] == 'user' %}{%- set ns.is_tool = false -%}{{'<｜User｜>' + message['content']}}{%- endif %}{%- if message['role'] == 'assistant' and message['content'] is none %}{%- set ns.is_tool = false -%}{%- for tool in message['tool_calls']%}{%- if not ns.is_first %}{{'<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\n' + '```json' + '\n' + tool['function']['arguments'] + '\n' + '```' + '<｜tool▁call▁end｜>'}}{%- set ns.is_first = true -%}{%- else %}{{'\n' + '<｜tool▁call▁begin｜>' + tool['type'] + '<｜tool▁sep｜>' + tool['function']['name'] + '\n' + '```json' + '\n' + tool['function']['arguments'] + '\n' + '```' + '<｜tool▁call▁end｜>'}}{{'<｜tool▁calls▁end｜><｜end▁of▁sentence｜>'}}{%- endif %}{%- endfor %}{%- endif %}{%- if message['role'] == 'assistant' and message['content'] is not none %}{%- if ns.is_tool %}{{'<｜tool▁outputs▁end｜>' + message['content'] + '<｜end▁of▁sentence｜>'}}{%- set ns.is_tool = false -%}{%- else %}{% set content = message['content'] %}{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}{{'<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>'}}{%- endif %}{%- endif %}{%- if message['role'] == 'tool' %}{%- set ns.is_tool = true -%}{%- if ns.is_output_first %}{{'<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- set ns.is_output_first = false %}{%- else %}{{'\n<｜tool▁output▁begin｜>' + message['content'] + '<｜tool▁output▁end｜>'}}{%- endif %}{%- endif %}{%- endfor -%}{% if ns.is_tool %}{{'<｜tool▁outputs▁end｜>'}}{% endif %}{% if add_generation_prompt and not ns.is_tool %}{{'<｜Assistant｜><think>\n'}}{% endif %})TPL";

// DeepSeek-Coder style: namespace flag, .strip(), tight `{{-'` / `'-}}`.
constexpr std::string_view kDeepSeekCoder = R"TPL({%- set ns = namespace(found=false) -%}
{%- for message in messages -%}
    {%- if message['role'] == 'system' -%}
        {%- set ns.found = true -%}
    {%- endif -%}
{%- endfor -%}
{{- bos_token -}}
{%- if not ns.found -%}
{{- 'You are an AI programming assistant. Only answer questions related to computer science.\n' -}}
{%- endif %}
{%- for message in messages %}
    {%- if message['role'] == 'system' %}
{{- message['content'].strip() + '\n\n' -}}
    {%- else %}
        {%- if message['role'] == 'user' %}
{{-'### Instruction:\n' + message['content'] | trim + '\n'-}}
        {%- else %}
{{-'### Response:\n' + message['content'] + '\n<|EOT|>\n'-}}
        {%- endif %}
    {%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}
{{- '### Response:' -}}
{%- endif %})TPL";

// SmolLM2: literal newlines inside string literals, "system" in text.
constexpr std::string_view kSmolLM2 = R"TPL({% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system
You are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>
' }}{% endif %}{{'<|im_start|>' + message['role'] + '
' + message['content'] + '<|im_end|>' + '
'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant
' }}{% endif %})TPL";

TEST(ChatTemplateScanTest, RealTemplatesAreClean) {
  for (std::string_view t : {kChatMlSimple, kQwen25, kLlama3, kLlama31, kMistralV1, kMistralTools, kGemma, kPhi3,
                             kDeepSeekR1, kDeepSeekCoder, kSmolLM2}) {
    ExpectClean(t);
  }
}

TEST(ChatTemplateScanTest, EmptyAndPlainTextAreClean) {
  ExpectClean("");
  ExpectClean("You are a system administrator. import os; os.system('ls'); eval(x) {not a tag} 100% done");
  ExpectClean("{ {x} } %} }} #}");  // Closers with no opener are text.
  ExpectClean("{# {{ os.system('id') }} __class__ #}");
  ExpectClean("{{ x }}{#- comment -#}{{- y -}}{%+ if z +%}{%- endif -%}");
}

// ---------------------------------------------------------------------------
// kNonPrintableByte

TEST(ChatTemplateScanTest, NonPrintableBytes) {
  const std::string nul = "hello\0world"s;
  const auto issues = ScanChatTemplate(nul);
  ASSERT_EQ(issues.size(), 1u) << Dump(issues);
  EXPECT_EQ(issues[0].kind, K::kNonPrintableByte);
  EXPECT_EQ(issues[0].offset, 5u);
  EXPECT_EQ(issues[0].detail, "\\x00");

  ExpectHas("{{ x\0 }}"s, K::kNonPrintableByte);   // Inside code too.
  ExpectOnly("a\x7f"s, K::kNonPrintableByte);       // DEL.
  ExpectOnly("a\x1b[31m"s, K::kNonPrintableByte);   // ESC.
  ExpectOnly("a\xc2\x85"s, K::kNonPrintableByte);   // C1 control NEL.
  ExpectOnly("a\xc0\xafz"s, K::kNonPrintableByte);  // Overlong '/'.
  ExpectOnly("a\xed\xa0\x80"s, K::kNonPrintableByte);  // Surrogate.
  ExpectOnly("a\xf4\x90\x80\x80"s, K::kNonPrintableByte);  // > U+10FFFF.
  ExpectOnly("truncated \xe2\x96"s, K::kNonPrintableByte);
  // A run of bad bytes is one issue.
  ExpectOnly("x\x01\x02\x03\xff\xfe"s, K::kNonPrintableByte);

  // Near misses: tabs, newlines and real UTF-8 (incl. 4-byte) are text.
  ExpectClean("a\tb\r\nc \xc2\xa0 \xe2\x96\x81 \xef\xbd\x9c \xf0\x9f\x98\x80 \xf4\x8f\xbf\xbf");
}

// ---------------------------------------------------------------------------
// kDunderAccess

TEST(ChatTemplateScanTest, DunderAttribute) {
  const auto issues = ScanChatTemplate("{{ x.__class__ }}");
  ASSERT_EQ(issues.size(), 1u) << Dump(issues);
  EXPECT_EQ(issues[0].kind, K::kDunderAccess);
  EXPECT_EQ(issues[0].offset, 5u);
  EXPECT_EQ(issues[0].detail, "x.__class__");  // the expression as written

  ExpectOnly("{{ ().__class__ }}", K::kDunderAccess);
  ExpectOnly("{{ 1.__class__ }}", K::kDunderAccess);
  // Jinja2 cannot parse it; another engine might: still reported.
  ExpectHas("{{ 1__class__ }}", K::kDunderAccess);
  ExpectOnly("{{ x . __mro__ }}", K::kDunderAccess);
  ExpectOnly("{% for c in x.__subclasses__() %}{% endfor %}", K::kDunderAccess);
  ExpectOnly("{{ x._TemplateReference__context }}", K::kDunderAccess);  // Sandbox-private.
  ExpectClean("{{ x.class_ }}");
  ExpectClean("{{ _x }}{{ x_.y_ }}{{ __ }}");
}

TEST(ChatTemplateScanTest, DunderInStringLiterals) {
  ExpectOnly("{{ x['__class__'] }}", K::kDunderAccess);
  ExpectOnly("{{ x[\"__globals__\"] }}", K::kDunderAccess);
  ExpectOnly("{{ x|map(attribute='__class__')|list }}", K::kDunderAccess);
  // Escapes are decoded as Jinja does.
  ExpectOnly(R"({{ x['\x5f\x5fclass\x5f\x5f'] }})", K::kDunderAccess);
  ExpectOnly(R"({{ x['\u005f\u005fclass\U0000005f\U0000005f'] }})", K::kDunderAccess);
  ExpectOnly(R"({{ x['\137\137class\137\137'] }})", K::kDunderAccess);
  ExpectOnly(R"({{ x['\N{LOW LINE}\N{LOW LINE}class\N{LOW LINE}\N{LOW LINE}'] }})", K::kDunderAccess);
  // Fragments and concatenations: adjacent literals, ~ and +.
  ExpectOnly("{{ x['__cla' ~ 'ss__'] }}", K::kDunderAccess);
  ExpectOnly("{{ x['_' '_class' '__'] }}", K::kDunderAccess);
  ExpectOnly("{{ x['_' + '_class_' + '_'] }}", K::kDunderAccess);

  // Near misses.
  ExpectClean("{{ names|join('_') }}{{ '__' }}{{ '___' }}{{ 'snake_case_name' }}{{ '**bold**' }}");
  ExpectClean(R"({{ '\x5f' }}{{ 'a\_b' }}{{ "it's" }}{{ '\\' }})");
  ExpectClean("{{ '_' ~ x ~ '_' }}");
}

// ---------------------------------------------------------------------------
// kAttrFilter

TEST(ChatTemplateScanTest, AttrFilter) {
  auto issues = ScanChatTemplate("{{ ''|attr('__cla'~'ss__') }}");
  ASSERT_EQ(issues.size(), 2u) << Dump(issues);
  EXPECT_EQ(issues[0].kind, K::kAttrFilter);
  EXPECT_EQ(issues[0].offset, 6u);
  EXPECT_EQ(issues[0].detail, R"(\x27\x27|attr(\x27__cla\x27~\x27ss__\x27))");
  EXPECT_EQ(issues[1].kind, K::kDunderAccess);
  EXPECT_EQ(issues[1].offset, 11u);  // the argument
  EXPECT_NE(issues[1].detail.find("builds '__class__'"), std::string::npos) << issues[1].detail;

  issues = ScanChatTemplate("{{ x | attr('name') }}");
  ASSERT_EQ(issues.size(), 1u) << Dump(issues);
  EXPECT_EQ(issues[0].kind, K::kAttrFilter);
  EXPECT_EQ(issues[0].detail, R"(x | attr(\x27name\x27))");

  // A name the analyser cannot fold, from the request or not: the filter,
  // plus a computed name when it is not chat data.
  ExpectOnly("{{ x|attr(a) }}", K::kAttrFilter);
  ExpectOnly("{{ x|attr(('a')) ~ ('b') }}", K::kAttrFilter);
  ExpectOnly("{{ x|attr(['a','b']|join) }}", K::kAttrFilter);
  issues = ScanChatTemplate("{{ x|attr('%s'|format(y)) }}");
  EXPECT_EQ(Count(issues, K::kAttrFilter), 1u) << Dump(issues);
  ExpectOnly("{% filter attr('x') %}abc{% endfilter %}", K::kAttrFilter);

  // Near misses: a variable or attribute called attr, and map(attribute=...).
  ExpectClean("{{ x.attr }}{{ attr }}{{ attr(1) }}{{ tools|map(attribute='name')|join(', ') }}");
}

// ---------------------------------------------------------------------------
// kDangerousName

TEST(ChatTemplateScanTest, DangerousNames) {
  auto issues = ScanChatTemplate("{{ os.system('id') }}");
  ASSERT_EQ(issues.size(), 1u) << Dump(issues);  // system is also a field of chat data
  EXPECT_EQ(issues[0].detail, "os");
  EXPECT_EQ(issues[0].offset, 3u);
  issues = ScanChatTemplate("{{ x.__init__.__globals__.popen('id') }}");
  EXPECT_EQ(Count(issues, K::kDangerousName), 1u) << Dump(issues);

  for (std::string_view t : {"{{ self }}", "{{ config.items() }}", "{{ request.args }}", "{{ x.popen('id') }}",
                             "{{ eval }}", "{% set g = getattr %}"}) {
    ExpectOnly(t, K::kDangerousName);
  }
  // A name the template binds itself is its own.
  ExpectClean("{% set config = {'a': 1} %}{{ config.a }}{% for self in messages %}{{ self.content }}{% endfor %}");

  // Near misses: text, string literals and longer identifiers.
  ExpectClean("system: {{ 'system' }}{% if message['role'] == 'system' %}os open self{% endif %}");
  ExpectClean("{% set system_message = x %}{{ ns.system_prompt }}{{ builtin_tools }}{{ oss }}{{ opened }}");
  ExpectClean("{{ message.system }}{{ tool.config }}{{ m.open }}");
}

// ---------------------------------------------------------------------------
// kGlobalsHelper

TEST(ChatTemplateScanTest, GlobalsHelpers) {
  auto issues = ScanChatTemplate("{{ cycler.__init__.__globals__ }}");
  EXPECT_EQ(Count(issues, K::kGlobalsHelper), 1u) << Dump(issues);
  EXPECT_EQ(Count(issues, K::kDunderAccess), 2u) << Dump(issues);
  EXPECT_EQ(issues.size(), 3u);

  issues = ScanChatTemplate("{{ lipsum|attr('__globals__') }}");
  EXPECT_EQ(Count(issues, K::kGlobalsHelper), 1u) << Dump(issues);
  EXPECT_EQ(Count(issues, K::kAttrFilter), 1u) << Dump(issues);

  ExpectOnly("{{ joiner['x'] }}", K::kGlobalsHelper);
  ExpectOnly("{{ namespace.x }}", K::kGlobalsHelper);
  ExpectOnly("{{ range.x }}", K::kGlobalsHelper);

  // Near misses: calling the helpers, attributes of their results, same-named attributes.
  ExpectClean(
      "{% set ns = namespace(found=false) %}{% set ns.found = true %}{{ ns.found }}"
      "{% for i in range(3) %}{{ i }}{% endfor %}{% set c = cycler('a', 'b') %}{{ c.next() }}"
      "{{ x.range.y }}{{ lipsum(2) }}");
}

// A dict of macros, dispatched by name, is a dict: before, a dict literal
// took its macro value's origin and `d.g` was read as an attribute of the
// macro (GG8006 on a benign template). A helper kept in a dict still
// reaches Python, and a macro reached through one still recurses.
TEST(ChatTemplateScanTest, ADictOfMacrosIsReadAsADict) {
  const std::string m = "{% macro m(x) %}{{ x }}{% endmacro %}";
  ExpectClean(m + "{% set d = {'g': m} %}{% for msg in messages %}{{ d.g(msg.content) }}{% endfor %}");
  ExpectClean(m + "{% set d = {'g': m, 'h': m} %}{% for msg in messages %}{{ d['h'](msg.content) }}{% endfor %}");
  ExpectClean(m + "{% set d = dict(g=m) %}{{ d.g(1) }}{{ d.items() | length }}{{ d.zz }}");
  // Dispatch by the message's role: only the dict's own values are reached.
  ExpectClean(m + "{% set d = {'user': m, 'assistant': m} %}{% for msg in messages %}{{ d[msg.role](msg.content) }}"
                  "{% endfor %}");

  auto issues = ScanChatTemplate("{% set d = {'g': lipsum} %}{{ d.g.__globals__ }}");
  EXPECT_EQ(Count(issues, K::kGlobalsHelper), 1u) << Dump(issues);
  EXPECT_EQ(Count(issues, K::kDunderAccess), 1u) << Dump(issues);
  issues = ScanChatTemplate("{% set d = {'g': lipsum} if x else {'h': 1} %}{{ d['g']['os'] }}");
  EXPECT_EQ(Count(issues, K::kGlobalsHelper), 1u) << Dump(issues);
  // Its values() and items() are the helpers it holds (before, a method of
  // a dict of helpers gave data, and only the first read of `d.values`
  // was reported).
  issues = ScanChatTemplate("{% set d = {'g': lipsum} %}{% for v in d.values() %}{{ v.x }}{% endfor %}");
  EXPECT_EQ(Count(issues, K::kGlobalsHelper), 1u) << Dump(issues);
  ExpectClean(m + "{% set d = {'g': m} %}{{ d.get('g')(2) }}{% for k, f in d.items() %}{{ f(k) }}{% endfor %}");
  // Joined with a helper itself, the dict may be the helper: read as one.
  issues = ScanChatTemplate("{% set d = {'g': 1} if x else lipsum %}{{ d.g }}");
  EXPECT_EQ(Count(issues, K::kGlobalsHelper), 1u) << Dump(issues);
  for (const std::string call : {"x.g(x)", "x['g'](x)"}) {
    issues = ScanChatTemplate("{% macro r(x) %}{{ " + call + " }}{% endmacro %}{% set d = {'g': r} %}{{ r(d) }}");
    EXPECT_EQ(Count(issues, K::kUnboundedRecursion), 1u) << call << Dump(issues);
  }
}

// ---------------------------------------------------------------------------
// kRecursiveMacro

TEST(ChatTemplateScanTest, RecursiveMacros) {
  // A call under a condition may end: a warning (bounded recursion over
  // data is how tool-use templates print JSON schemas).
  const std::string_view direct = "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% endif %}{% endmacro %}";
  auto issues = ScanChatTemplate(direct);
  ASSERT_EQ(issues.size(), 1u) << Dump(issues);
  EXPECT_EQ(issues[0].kind, K::kRecursiveMacro);
  EXPECT_EQ(issues[0].offset, direct.find("f(n - 1)"));
  for (const char* guarded : {
           "{% macro f(n) %}{% for x in n %}{{ f(x) }}{% endfor %}{% endmacro %}",
           "{% macro f(n) %}{{ f(n - 1) if n > 0 else '' }}{% endmacro %}",
           "{% macro f(n) %}{{ n and f(n - 1) }}{% endmacro %}",
           "{% macro f(n) %}{{ n == 0 or f(n - 1) }}{% endmacro %}",
           "{% macro f(n) %}{% if n %}x{% else %}{{ f(n) }}{% endif %}{% endmacro %}",
       }) {
    ExpectOnly(guarded, K::kRecursiveMacro);
  }
  // The shape of real tool-use templates (Hermes 2 Pro's json_to_python_type,
  // written here from memory): every self-call sits in an if/elif branch.
  issues = ScanChatTemplate(
      "{%- macro json_to_python_type(json_spec) %}\n"
      "{%- set basic_type_map = {\"string\": \"str\", \"number\": \"float\", \"integer\": \"int\"} %}\n"
      "{%- if basic_type_map[json_spec.type] is defined %}{{- basic_type_map[json_spec.type] }}\n"
      "{%- elif json_spec.type == \"array\" %}{{- \"list[\" + json_to_python_type(json_spec|items) + \"]\" }}\n"
      "{%- elif json_spec.type == \"object\" %}\n"
      "  {%- if json_spec.additionalProperties is defined %}\n"
      "    {{- \"dict[str, \" + json_to_python_type(json_spec.additionalProperties) + ']' }}\n"
      "  {%- else %}{{- \"dict\" }}{%- endif %}\n"
      "{%- elif json_spec.type is iterable %}{{- \"Union[\" }}\n"
      "  {%- for t in json_spec.type %}{{- json_to_python_type({\"type\": t}) }}"
      "{%- if not loop.last %}{{- \",\" }}{%- endif %}{%- endfor %}{{- \"]\" }}\n"
      "{%- else %}{{- \"Any\" }}{%- endif %}\n"
      "{%- endmacro %}\n");
  EXPECT_EQ(Count(issues, K::kUnboundedRecursion), 0u) << Dump(issues);
  EXPECT_EQ(Count(issues, K::kRecursiveMacro), 3u) << Dump(issues);  // its three self-calls

  // No condition between the call and its macro: nothing ends it.
  for (const char* unbounded : {
           "{% macro f() %}{{ f() }}{% endmacro %}",
           "{% macro f(n) %}{% set x = f(n + 1) %}{{ x }}{% endmacro %}{{ f(0) }}",
           "{% macro f(n) %}{% if n %}a{% endif %}{{ f(n) }}{% endmacro %}",
           "{% macro f(n) %}{% filter upper %}{{ f(n) }}{% endfilter %}{% endmacro %}",
       }) {
    issues = ScanChatTemplate(unbounded);
    ASSERT_EQ(issues.size(), 1u) << unbounded << "\n" << Dump(issues);
    EXPECT_EQ(issues[0].kind, K::kUnboundedRecursion) << unbounded;
  }

  ExpectOnly("{% macro f(n) %}{% if n %}{% call f(n - 1) %}x{% endcall %}{% endif %}{% endmacro %}",
             K::kRecursiveMacro);
  // Mutual recursion, through a macro defined later, with no condition:
  // each call on the cycle.
  issues = ScanChatTemplate(
      "{% macro a() %}{{ b() }}{% endmacro %}{% macro b() %}{{ c() }}{% endmacro %}"
      "{% macro c() %}{{ a() }}{% endmacro %}{{ a() }}");
  EXPECT_EQ(Count(issues, K::kUnboundedRecursion), 3u) << Dump(issues);
  EXPECT_EQ(issues.size(), 3u);
  // ... and with a condition on the way: bounded.
  issues = ScanChatTemplate(
      "{% macro a(n) %}{% if n %}{{ b(n - 1) }}{% endif %}{% endmacro %}{% macro b(n) %}{{ a(n) }}{% endmacro %}");
  EXPECT_EQ(Count(issues, K::kRecursiveMacro), 1u) << Dump(issues);
  EXPECT_EQ(Count(issues, K::kUnboundedRecursion), 0u) << Dump(issues);
  // Self-application and caller re-entry: nothing bounds them.
  for (const char* t : {"{% macro f(g) %}{{ g(g) }}{% endmacro %}{{ f(f) }}",
                        "{% macro m() %}{{ caller(caller) }}{% endmacro %}{% call(c) m() %}{{ c(c) }}{% endcall %}"}) {
    issues = ScanChatTemplate(t);
    EXPECT_GE(Count(issues, K::kUnboundedRecursion), 1u) << t << "\n" << Dump(issues);
    EXPECT_EQ(Count(issues, K::kUnboundedRecursion), issues.size()) << t << "\n" << Dump(issues);
  }

  // Near misses: macros calling other macros, a macro called after its end,
  // a nested macro calling its outer one, caller() used normally.
  ExpectClean(
      "{% macro render(m) %}{{ m.content|trim }}{% endmacro %}"
      "{% macro render_all(ms) %}{% for m in ms %}{{ render(m) }}{% endfor %}{% endmacro %}"
      "{{ render_all(messages) }}{{ render(messages[0]) }}"
      "{% macro outer() %}{% macro inner() %}{{ outer() }}{% endmacro %}{% endmacro %}"
      "{% macro wrap() %}<b>{{ caller() }}</b>{% endmacro %}{% call wrap() %}hi{% endcall %}");
}

// ---------------------------------------------------------------------------
// kExcessiveNesting

std::string NestedIfs(int n) {
  std::string t;
  for (int i = 0; i < n; ++i) t += "{% if x %}";
  t += "deep";
  for (int i = 0; i < n; ++i) t += "{% endif %}";
  return t;
}

TEST(ChatTemplateScanTest, ExcessiveNesting) {
  const std::string deep = NestedIfs(40);
  const auto issues = ScanChatTemplate(deep);
  ASSERT_EQ(issues.size(), 1u) << Dump(issues);  // One per excursion, not per level.
  EXPECT_EQ(issues[0].kind, K::kExcessiveNesting);
  EXPECT_EQ(issues[0].offset, 32u * 10u);  // The 33rd {% if %}.

  ExpectClean(NestedIfs(32));
  ExpectOnly(std::string(40, '(').insert(0, "{{ ") + "x" + std::string(40, ')') + " }}", K::kExcessiveNesting);
  ExpectClean(std::string(32, '[').insert(0, "{{ ") + std::string(32, ']') + " }}");
  // Blocks and brackets add up; the limit is a parameter.
  ExpectOnly(NestedIfs(30).insert(30 * 10, "{{ (((x))) }}"), K::kExcessiveNesting);
  ExpectOnly(NestedIfs(5), K::kExcessiveNesting, {.max_nesting = 4});
  ExpectClean(NestedIfs(5), {.max_nesting = 5});
  // Inline sets do not nest; block sets do.
  std::string sets;
  for (int i = 0; i < 100; ++i) sets += "{% set x = 1 %}{% set y %}{% endset %}";
  ExpectClean(sets);
  // Two separate excursions are two issues.
  EXPECT_EQ(Count(ScanChatTemplate(deep + deep), K::kExcessiveNesting), 2u);
}

TEST(ChatTemplateScanTest, NestingOnTheWayToAStackOverflowIsDeepNesting) {
  // Past 256 levels: a second issue, once per excursion, at the 257th level.
  const std::string blocks = NestedIfs(300);
  auto issues = ScanChatTemplate(blocks);
  EXPECT_EQ(Count(issues, K::kExcessiveNesting), 1u) << Dump(issues);
  ASSERT_EQ(Count(issues, K::kDeepNesting), 1u) << Dump(issues);
  for (const TemplateIssue& i : issues) {
    if (i.kind == K::kDeepNesting) {
      EXPECT_EQ(i.offset, 256u * 10u);
    }
  }
  issues = ScanChatTemplate("{{ " + std::string(257, '(') + "x" + std::string(257, ')') + " }}");
  EXPECT_EQ(Count(issues, K::kDeepNesting), 1u) << Dump(issues);
  // 256 levels: deep, but not that deep.
  EXPECT_EQ(Count(ScanChatTemplate(NestedIfs(256)), K::kDeepNesting), 0u);
  EXPECT_EQ(Count(ScanChatTemplate(blocks + blocks), K::kDeepNesting), 2u);
}

// ---------------------------------------------------------------------------
// kUnterminated

TEST(ChatTemplateScanTest, Unterminated) {
  auto issues = ScanChatTemplate("Hi {{ name ");
  ASSERT_EQ(issues.size(), 1u) << Dump(issues);
  EXPECT_EQ(issues[0].kind, K::kUnterminated);
  EXPECT_EQ(issues[0].offset, 3u);

  for (std::string_view t : {"{% if x ", "{# comment", "{{ 'abc }}", "{{ \"abc\\\" }}", "{% raw %}{{ x }}",
                             "{{ (x }}", "{{ x }", "{% if x %}never closed", "{% for m in ms %}{% if m %}{% endfor %}",
                             "{% set x %}abc", "{#}"}) {
    ExpectOnly(t, K::kUnterminated);
  }

  // Near misses: closers inside strings and balanced brackets do not end tags.
  ExpectClean("{{ '}}' }}{{ \"%}\" }}{{ {'a': {'b': 1}} }}{% set d = {'k': [1, {'x': 2}]} %}{{ '{{' }}");
  ExpectClean("{{ 'a\\'b' ~ \"c\\\"d\" }}");
}

TEST(ChatTemplateScanTest, RawBlocksAreText) {
  ExpectClean("{% raw %}{{ os.system('id') }} {% if {% endraw %}");
  ExpectClean("{%- raw -%}{{ x.__class__ }}{%- endraw -%}{{ y }}");
  // Not a raw tag: the body is code.
  ExpectHas("{% rawx %}{{ os }}", K::kDangerousName);
  ExpectHas("{% raw %}x{% endraw %}{{ os }}", K::kDangerousName);
}

// ---------------------------------------------------------------------------
// kTooLarge and limits

TEST(ChatTemplateScanTest, TooLarge) {
  const std::string big(11, 'x');
  const auto issues = ScanChatTemplate(big, {.max_bytes = 10});
  ASSERT_EQ(issues.size(), 1u);
  EXPECT_EQ(issues[0].kind, K::kTooLarge);
  EXPECT_EQ(issues[0].offset, 10u);
  ExpectClean(std::string(10, 'x'), {.max_bytes = 10});
  // Nothing else is scanned once over the cap.
  ExpectOnly("{{ os.__class__ }}", K::kTooLarge, {.max_bytes = 4});
}

TEST(ChatTemplateScanTest, MaxIssues) {
  std::string t;
  for (int i = 0; i < 500; ++i) t += "{{ os }}\x01";
  EXPECT_EQ(ScanChatTemplate(t).size(), 64u);
  EXPECT_EQ(ScanChatTemplate(t, {.max_issues = 3}).size(), 3u);
  EXPECT_TRUE(ScanChatTemplate(t, {.max_issues = 0}).empty());
  // Issues come sorted by offset.
  const auto issues = ScanChatTemplate(t, {.max_issues = 10});
  EXPECT_TRUE(std::is_sorted(issues.begin(), issues.end(),
                             [](const auto& a, const auto& b) { return a.offset < b.offset; }));
}

TEST(ChatTemplateScanTest, DetailIsPrintableAndShort) {
  std::string name(5000, 'a');
  const auto issues = ScanChatTemplate("{{ x['__" + name + "\x01\xff'] }}");
  // Too long to fold: a name the analyser does not know, at the subscript.
  ASSERT_EQ(Count(issues, K::kComputedName), 1u) << Dump(issues);
  for (const auto& i : issues) {
    EXPECT_LE(i.detail.size(), 160u);
    for (unsigned char c : i.detail) EXPECT_TRUE(c >= 0x20 && c < 0x7f);
  }
}

TEST(ChatTemplateScanTest, KindNames) {
  EXPECT_STREQ(TemplateIssueKindName(K::kNonPrintableByte), "non-printable-byte");
  EXPECT_STREQ(TemplateIssueKindName(K::kDunderAccess), "dunder-access");
  EXPECT_STREQ(TemplateIssueKindName(K::kAttrFilter), "attr-filter");
  EXPECT_STREQ(TemplateIssueKindName(K::kDangerousName), "dangerous-name");
  EXPECT_STREQ(TemplateIssueKindName(K::kGlobalsHelper), "globals-helper");
  EXPECT_STREQ(TemplateIssueKindName(K::kRecursiveMacro), "recursive-macro");
  EXPECT_STREQ(TemplateIssueKindName(K::kExcessiveNesting), "excessive-nesting");
  EXPECT_STREQ(TemplateIssueKindName(K::kUnterminated), "unterminated");
  EXPECT_STREQ(TemplateIssueKindName(K::kTooLarge), "too-large");
}

// ---------------------------------------------------------------------------
// Robustness: arbitrary bytes never crash and results stay well-formed.

void CheckWellFormed(std::string_view t, const TemplateScanOptions& opts = {}) {
  const auto issues = ScanChatTemplate(t, opts);
  ASSERT_LE(issues.size(), opts.max_issues);
  for (const auto& i : issues) {
    ASSERT_LT(i.offset, t.size()) << TemplateIssueKindName(i.kind);
    ASSERT_LE(i.detail.size(), 160u);
  }
}

TEST(ChatTemplateScanTest, EveryPrefixOfRealTemplates) {
  for (std::string_view t : {kQwen25, kLlama31, kMistralTools, kDeepSeekR1}) {
    for (size_t n = 0; n <= t.size(); n += 3) CheckWellFormed(t.substr(0, n));
  }
}

TEST(ChatTemplateScanTest, RandomInputs) {
  static const std::vector<std::string> kPieces = {
      "{{", "}}", "{%", "%}", "{#", "#}", "-", "+", "'", "\"", "\\", "(", ")", "[", "]", "{", "}", "|", "~",
      ".", "=", "_", "__", "x", "os", "attr", "macro ", "endmacro", "if ", "endif", "set ", "raw", "endraw",
      "caller", "cycler", " ", "\n", "\0"s, "\xff", "\xc2", "\xe2\x96", "\\x5f", "\\N{", "1", "f(", "f"};
  std::mt19937 rng(12345);
  for (int iter = 0; iter < 20000; ++iter) {
    std::string t;
    const int n = static_cast<int>(rng() % 40);
    for (int i = 0; i < n; ++i) t += kPieces[rng() % kPieces.size()];
    if (!t.empty() && rng() % 4 == 0) t[rng() % t.size()] = static_cast<char>(rng());
    CheckWellFormed(t, {.max_nesting = static_cast<uint32_t>(rng() % 8), .max_issues = 1 + rng() % 16});
  }
}

// Linearity is a cost ratio measured by bench/template_bench (docs/performance.md),
// not a time asserted here: this test only holds that each input ends, bounded.
TEST(ChatTemplateScanTest, AdversarialInputsEndWellFormed) {
  const std::vector<std::string> inputs = {
      "{{ " + std::string(1 << 20, '('),
      std::string(1 << 19, '{') + "{",
      "{% raw %}" + std::string(1 << 18, ' ') + [] {
        std::string s;
        for (int i = 0; i < 50000; ++i) s += "{% endra";
        return s;
      }(),
      "{{ '" + std::string(1 << 19, '\\') + "x'",
      [] {
        std::string s = "{{ '";
        for (int i = 0; i < 100000; ++i) s += "\\N{";
        return s + "' }}";
      }(),
      [] {
        std::string s;
        for (int i = 0; i < 100000; ++i) s += "{% macro m" + std::to_string(i) + "() %}{{ m" + std::to_string(i + 1) + "() }}";
        return s;
      }(),
      [] {  // a loop body setting 20,000 namespace attributes (once quadratic)
        std::string s = "{% set ns = namespace() %}{% for m in messages %}";
        for (int i = 0; i < 20000; ++i) s += "{% set ns.a" + std::to_string(i) + " = 1 %}";
        return s + "{% endfor %}";
      }(),
  };
  // Their time is measured by bench/ (BM_TemplateAdversarial); here they
  // must end, well-formed and bounded.
  for (const auto& t : inputs) CheckWellFormed(t, {.max_bytes = 1 << 23, .max_nesting = UINT32_MAX});
}

}  // namespace
}  // namespace ggufguard
