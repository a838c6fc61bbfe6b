# Writes OUT from IN with the version and the git commit of SRC as it is now:
# run at every build (not only at configure), so a binary names the commit it
# was built from; "-dirty" when tracked files differ from that commit. OUT is
# rewritten only when its text changes, so an unchanged commit recompiles
# nothing.
execute_process(COMMAND git rev-parse --short=12 HEAD
                WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE KSIM_GIT_COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE
                ERROR_QUIET)
if(NOT KSIM_GIT_COMMIT)
  set(KSIM_GIT_COMMIT "unknown")
else()
  execute_process(COMMAND git diff --quiet HEAD --
                  WORKING_DIRECTORY ${SRC}
                  RESULT_VARIABLE KSIM_GIT_DIRTY
                  OUTPUT_QUIET ERROR_QUIET)
  if(KSIM_GIT_DIRTY EQUAL 1)
    set(KSIM_GIT_COMMIT "${KSIM_GIT_COMMIT}-dirty")
  endif()
endif()
configure_file(${IN} ${OUT}.new @ONLY)
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.new ${OUT})
file(REMOVE ${OUT}.new)
