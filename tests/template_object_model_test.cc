// The object model (object_model.h): which attributes of a root are safe,
// and which names count as Python's special names.
#include "ggufguard/template/object_model.h"

#include <gtest/gtest.h>

#include <iterator>
#include <string_view>

namespace ggufguard::jinja::analysis {
namespace {

TEST(TemplateObjectModelTest, RootsAllowOnlyTheirOwnAttributes) {
  EXPECT_TRUE(RootAllows("loop", "index0"));
  EXPECT_TRUE(RootAllows("loop", "cycle"));
  EXPECT_FALSE(RootAllows("loop", "__class__"));
  EXPECT_FALSE(RootAllows("loop", "_after"));  // a LoopContext internal
  EXPECT_TRUE(RootAllows("cycler()", "next"));
  EXPECT_FALSE(RootAllows("cycler()", "__init__"));
  // A namespace holds what the template set, under any name its dict
  // takes (`_count` too); only its own internals reach Python.
  EXPECT_TRUE(RootAllows("namespace()", "anything"));
  EXPECT_TRUE(RootAllows("namespace()", "_count"));
  EXPECT_FALSE(RootAllows("namespace()", "_Namespace__attrs"));
  EXPECT_FALSE(RootAllows("namespace()", "__class__"));
  // Roots with no rule allow nothing.
  EXPECT_FALSE(RootAllows("lipsum", "index"));
  EXPECT_FALSE(RootAllows("joiner()", "next"));
  EXPECT_FALSE(RootAllows("self", "_TemplateReference__context"));
}

TEST(TemplateObjectModelTest, DunderLikeNames) {
  EXPECT_TRUE(IsDunderLike("__class__"));
  EXPECT_TRUE(IsDunderLike("__globals"));
  EXPECT_FALSE(IsDunderLike("__"));
  EXPECT_FALSE(IsDunderLike("___"));
  EXPECT_FALSE(IsDunderLike("_x"));
  EXPECT_FALSE(IsDunderLike("class"));
}

TEST(TemplateObjectModelTest, EveryJinja2FilterHasOneRow) {
  // jinja2.filters.FILTERS in Jinja2 3.1 (Debian 12's python3-jinja2), and
  // transformers' tojson, which has the same name.
  constexpr std::string_view kJinja2Filters[] = {
      "abs", "attr", "batch", "capitalize", "center", "count", "d", "default", "dictsort", "e", "escape",
      "filesizeformat", "first", "float", "forceescape", "format", "groupby", "indent", "int", "items", "join",
      "last", "length", "list", "lower", "map", "max", "min", "pprint", "random", "reject", "rejectattr",
      "replace", "reverse", "round", "safe", "select", "selectattr", "slice", "sort", "string", "striptags",
      "sum", "title", "tojson", "trim", "truncate", "unique", "upper", "urlencode", "urlize", "wordcount",
      "wordwrap", "xmlattr"};
  for (std::string_view f : kJinja2Filters) {
    ASSERT_NE(FindFilter(f), nullptr) << f;
    EXPECT_EQ(FindFilter(f)->name, f);
  }
  EXPECT_EQ(std::size(kFilters), std::size(kJinja2Filters));  // no row for a filter Jinja2 lacks, none twice
  EXPECT_EQ(FindFilter("no_such_filter"), nullptr);
  EXPECT_EQ(FindFilter("attr")->result, FilterResult::kAttribute);
  EXPECT_EQ(FindFilter("string")->result, FilterResult::kPrintedForm);
  EXPECT_EQ(FindFilter("join")->result, FilterResult::kFoldedString);
}

TEST(TemplateObjectModelTest, TablesHoldWhatTheAnalyserRelyOn) {
  EXPECT_TRUE(In(kGlobals, "namespace"));
  EXPECT_TRUE(In(kGlobals, "raise_exception"));
  EXPECT_FALSE(In(kGlobals, "messages"));
  EXPECT_TRUE(In(kDangerousNames, "self"));
  EXPECT_FALSE(In(kDangerousNames, "content"));
  EXPECT_TRUE(In(kDangerousAttributes, "f_globals"));
  // Words that chat data uses as fields are not dangerous attributes.
  EXPECT_FALSE(In(kDangerousAttributes, "system"));
  EXPECT_TRUE(In(kDictMethods, "items"));
  EXPECT_TRUE(In(kLiteralMembers, "format_map"));
  EXPECT_FALSE(In(kLiteralMembers, "__class__"));
}

}  // namespace
}  // namespace ggufguard::jinja::analysis
