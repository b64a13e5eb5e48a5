# Read by CTest when it starts (a folder's TEST_INCLUDE_FILES; see SPLIT in llamadesk_add_test):
# asks a Qt Test executable for its data rows (-datatags: "Class function [row]" per line) and adds
# one CTest test for each, named NAME/function:row (NAME/function for a function without rows), so
# a heavy file runs in parts: each has its own time and timeout, a row that skips shows as skipped,
# and ctest --parallel spreads them.
# Set before this is included: name, exe, cmake (the cmake program), env, labels, timeout.
# (A row's name must hold no semicolon.)
# An executable that cannot list its parts (not built, or failing) runs whole under its own name
# instead, so no part is ever left out silently.
execute_process(COMMAND "${cmake}" -E env ${env} "${exe}" -datatags
    OUTPUT_VARIABLE listing ERROR_VARIABLE listing_errors RESULT_VARIABLE listing_result)
set(parts)
if(listing_result EQUAL 0)
    string(REPLACE "\n" ";" lines "${listing}")
    foreach(line IN LISTS lines)
        if(line MATCHES "^[^ ]+ ([^ ]+) (.+)$")
            list(APPEND parts "${CMAKE_MATCH_1}:${CMAKE_MATCH_2}")
        elseif(line MATCHES "^[^ ]+ ([^ ]+)$")
            list(APPEND parts "${CMAKE_MATCH_1}")
        endif()
    endforeach()
endif()
if(NOT parts)
    message(WARNING "${exe} -datatags listed no tests (exit ${listing_result}): ${listing_errors}"
                    " -- ${name} runs whole")
    add_test("${name}" "${exe}")
    set_tests_properties("${name}" PROPERTIES LABELS "${labels}" TIMEOUT "${timeout}" ENVIRONMENT "${env}")
    return()
endif()
foreach(part IN LISTS parts)
    add_test("${name}/${part}" "${exe}" "${part}")
    # One part is one case: when it skips (no such CPU, no ../shared), CTest says skipped, not passed.
    set_tests_properties("${name}/${part}" PROPERTIES LABELS "${labels}" TIMEOUT "${timeout}" ENVIRONMENT "${env}"
        SKIP_REGULAR_EXPRESSION "SKIP   : ")
endforeach()
