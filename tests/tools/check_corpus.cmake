# cmake -DMAKE_CORPUS=... -DCORPUS_DIR=... -DSCRATCH_DIR=... -P check_corpus.cmake
# Regenerates the corpus into SCRATCH_DIR and compares it with CORPUS_DIR.
file(REMOVE_RECURSE ${SCRATCH_DIR})
execute_process(COMMAND ${MAKE_CORPUS} ${SCRATCH_DIR} RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "make_corpus failed (exit ${rc})")
endif()
set(stale "")
# compare(SUB GLOB...): the files of CORPUS_DIR/SUB matching the globs must be
# exactly those make_corpus writes there, byte for byte.
function(compare sub)
  list(TRANSFORM ARGN PREPEND ${SCRATCH_DIR}/${sub}/ OUTPUT_VARIABLE fresh_globs)
  list(TRANSFORM ARGN PREPEND ${CORPUS_DIR}/${sub}/ OUTPUT_VARIABLE committed_globs)
  file(GLOB fresh RELATIVE ${SCRATCH_DIR}/${sub} ${fresh_globs})
  file(GLOB committed RELATIVE ${CORPUS_DIR}/${sub} ${committed_globs})
  foreach(f ${fresh})
    if(NOT EXISTS ${CORPUS_DIR}/${sub}/${f})
      list(APPEND stale "missing ${sub}/${f}")
      continue()
    endif()
    execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${SCRATCH_DIR}/${sub}/${f} ${CORPUS_DIR}/${sub}/${f}
                    RESULT_VARIABLE differs)
    if(NOT differs EQUAL 0)
      list(APPEND stale "changed ${sub}/${f}")
    endif()
  endforeach()
  foreach(f ${committed})
    if(NOT EXISTS ${SCRATCH_DIR}/${sub}/${f})
      list(APPEND stale "extra ${sub}/${f}")
    endif()
  endforeach()
  set(stale ${stale} PARENT_SCOPE)
endfunction()
foreach(sub valid rules policies)
  compare(${sub} *.gguf *.json *.seed)
endforeach()
# corpus/regressions holds hand-kept files too: only what make_corpus writes
# there (the loader oracle's oracle-*.gguf) is compared.
compare(regressions oracle-*.gguf)
if(stale)
  list(JOIN stale "\n  " lines)
  message(FATAL_ERROR "corpus/ is out of date:\n  ${lines}\nregenerate it: "
          "cmake --build build/dev --target make_corpus && ./build/dev/tests/tools/make_corpus corpus")
endif()
