// The object model (object_model.h): which attributes of a root are safe,
// and which names count as Python's special names.
#include "ggufguard/template/object_model.h"

#include <gtest/gtest.h>

namespace ggufguard::jinja::analysis {
namespace {

TEST(TemplateObjectModelTest, RootsAllowOnlyTheirOwnAttributes) {
  EXPECT_TRUE(RootAllows("loop", "index0"));
  EXPECT_TRUE(RootAllows("loop", "cycle"));
  EXPECT_FALSE(RootAllows("loop", "__class__"));
  EXPECT_FALSE(RootAllows("loop", "_after"));  // a LoopContext internal
  EXPECT_TRUE(RootAllows("cycler()", "next"));
  EXPECT_FALSE(RootAllows("cycler()", "__init__"));
  // A namespace holds what the template set: any public name.
  EXPECT_TRUE(RootAllows("namespace()", "anything"));
  EXPECT_FALSE(RootAllows("namespace()", "_private"));
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
