# The rule table (src/ggufguard/findings/rules.def) and the limit table
# (limits.def) are the one source of every rule and limit. This script keeps
# the copies that cannot be made by the C preprocessor in step with them:
#
# - fuzz/policy.dict, the policy fuzzer's dictionary (OSS-Fuzz reads it from
#   the source tree): its hand-written part (JSON syntax, policy fields) is
#   kept, and one entry per limit, rule name and rule code is generated;
# - docs/rules.md must name every rule, docs/rules/GGnnnn.md must exist for
#   each, and docs/policy.md must name every limit.
#
# Included by CMakeLists.txt, it stops the configure step with the rule or
# limit that lacks its copy. Run as a script it rewrites the dictionary:
#   cmake -P cmake/rule_table.cmake
cmake_minimum_required(VERSION 3.25)

get_filename_component(_ggufguard_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(_findings "${_ggufguard_root}/src/ggufguard/findings")
set(_dict "${_ggufguard_root}/fuzz/policy.dict")

# Rule IDs and names, limit names, in table order. file(STRINGS) splits a
# line at ';', so each element is matched from its start and fragments are
# skipped.
file(STRINGS "${_findings}/rules.def" _rule_lines REGEX "^GGUFGUARD_RULE\\(")
set(_rule_ids)
set(_rule_names)
foreach(_line IN LISTS _rule_lines)
  if(_line MATCHES "^GGUFGUARD_RULE\\(([0-9][0-9][0-9][0-9]), k[A-Za-z0-9]+, \"([a-z0-9-]+)\"")
    list(APPEND _rule_ids "${CMAKE_MATCH_1}")
    list(APPEND _rule_names "${CMAKE_MATCH_2}")
  elseif(_line MATCHES "^GGUFGUARD_RULE\\(")
    message(FATAL_ERROR "rules.def: cannot read this line (ID, kEnumerator, \"kebab-name\" first):\n  ${_line}")
  endif()
endforeach()
file(STRINGS "${_findings}/limits.def" _limit_lines REGEX "^GGUFGUARD_LIMIT\\(")
set(_limit_names)
foreach(_line IN LISTS _limit_lines)
  if(_line MATCHES "^GGUFGUARD_LIMIT\\(uint(32|64)_t, ([a-z0-9_]+), ")
    list(APPEND _limit_names "${CMAKE_MATCH_2}")
  elseif(_line MATCHES "^GGUFGUARD_LIMIT\\(")
    message(FATAL_ERROR "limits.def: cannot read this line (uint32_t or uint64_t, name, default):\n  ${_line}")
  endif()
endforeach()

# The dictionary as it must be: the hand-written lines, then the generated.
set(_generated_marker "# Generated from rules.def and limits.def by cmake/rule_table.cmake: do not edit below.")
file(READ "${_dict}" _dict_now)
string(FIND "${_dict_now}" "${_generated_marker}" _at)
if(_at EQUAL -1)
  set(_hand_written "${_dict_now}")
else()
  string(SUBSTRING "${_dict_now}" 0 ${_at} _hand_written)
endif()
string(STRIP "${_hand_written}" _hand_written)
set(_dict_want "${_hand_written}\n\n${_generated_marker}\n")
foreach(_name IN LISTS _limit_names)
  string(APPEND _dict_want "limit_${_name}=\"\\\"${_name}\\\"\"\n")
endforeach()
foreach(_name IN LISTS _rule_names)
  string(REPLACE "-" "_" _ident "${_name}")
  string(APPEND _dict_want "rule_${_ident}=\"\\\"${_name}\\\"\"\n")
endforeach()
foreach(_id IN LISTS _rule_ids)
  string(APPEND _dict_want "code_${_id}=\"\\\"GG${_id}\\\"\"\n")
endforeach()

if(CMAKE_SCRIPT_MODE_FILE)
  file(WRITE "${_dict}" "${_dict_want}")
  message(STATUS "wrote ${_dict}")
  return()
endif()

set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS
  "${_findings}/rules.def" "${_findings}/limits.def" "${_dict}"
  "${_ggufguard_root}/docs/rules.md" "${_ggufguard_root}/docs/policy.md")
if(NOT _dict_now STREQUAL _dict_want)
  message(FATAL_ERROR "fuzz/policy.dict is not in step with rules.def and limits.def: "
                      "run `cmake -P cmake/rule_table.cmake` and commit the result.")
endif()
file(READ "${_ggufguard_root}/docs/rules.md" _rules_index)
file(READ "${_ggufguard_root}/docs/policy.md" _policy_doc)
foreach(_id IN LISTS _rule_ids)
  if(NOT EXISTS "${_ggufguard_root}/docs/rules/GG${_id}.md")
    message(FATAL_ERROR "rule GG${_id} (rules.def) has no page: write docs/rules/GG${_id}.md")
  endif()
  string(FIND "${_rules_index}" "GG${_id}" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "rule GG${_id} (rules.def) is not in docs/rules.md: add its row")
  endif()
endforeach()
foreach(_name IN LISTS _limit_names)
  string(FIND "${_policy_doc}" "`${_name}`" _at)
  if(_at EQUAL -1)
    message(FATAL_ERROR "limit ${_name} (limits.def) is not in docs/policy.md: describe it there")
  endif()
endforeach()
