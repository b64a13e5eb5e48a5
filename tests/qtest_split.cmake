# Read by CTest when it starts (a folder's TEST_INCLUDE_FILES; see SPLIT in llamadesk_add_test):
# asks a Qt Test executable for its test functions (split FUNCTIONS) or for every data row of them
# (split ROWS) and adds one CTest test for each, named NAME/function or NAME/function:row, so a heavy
# file runs in parts: each part has its own time and timeout, and ctest --parallel spreads them.
# Set before this is included: name, exe, split, cmake (the cmake program), env, labels, timeout.
# (A row's name must hold no semicolon.)
# An executable that cannot list its parts (not built, or failing) runs whole under its own name
# instead, so no part is ever left out silently.
if(split STREQUAL "ROWS")
    set(list_option -datatags)  # "Class function [row]" per line
else()
    set(list_option -functions)  # "function()" per line
endif()
execute_process(COMMAND "${cmake}" -E env ${env} "${exe}" ${list_option}
    OUTPUT_VARIABLE listing ERROR_VARIABLE listing_errors RESULT_VARIABLE listing_result)
set(parts)
if(listing_result EQUAL 0)
    string(REPLACE "\n" ";" lines "${listing}")
    foreach(line IN LISTS lines)
        if(split STREQUAL "ROWS" AND line MATCHES "^[^ ]+ ([^ ]+) (.+)$")
            list(APPEND parts "${CMAKE_MATCH_1}:${CMAKE_MATCH_2}")
        elseif(split STREQUAL "ROWS" AND line MATCHES "^[^ ]+ ([^ ]+)$")
            list(APPEND parts "${CMAKE_MATCH_1}")
        elseif(NOT split STREQUAL "ROWS" AND line MATCHES "^([A-Za-z_][A-Za-z0-9_]*)\\(\\)$")
            list(APPEND parts "${CMAKE_MATCH_1}")
        endif()
    endforeach()
endif()
if(NOT parts)
    message(WARNING "${exe} ${list_option} listed no tests (exit ${listing_result}): ${listing_errors}"
                    " -- ${name} runs whole")
    add_test("${name}" "${exe}")
    set_tests_properties("${name}" PROPERTIES LABELS "${labels}" TIMEOUT "${timeout}" ENVIRONMENT "${env}")
    return()
endif()
foreach(part IN LISTS parts)
    add_test("${name}/${part}" "${exe}" "${part}")
    set_tests_properties("${name}/${part}" PROPERTIES LABELS "${labels}" TIMEOUT "${timeout}" ENVIRONMENT "${env}")
    # One row is one case: when it skips (no such CPU, no ../shared), CTest says skipped, not passed.
    if(split STREQUAL "ROWS")
        set_tests_properties("${name}/${part}" PROPERTIES SKIP_REGULAR_EXPRESSION "SKIP   : ")
    endif()
endforeach()
