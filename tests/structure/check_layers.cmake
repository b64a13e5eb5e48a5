# The layers ARCHITECTURE.md draws, checked over the source tree:
#   1. no engine module below engine/ includes the public header llamadesk/engine.h (the public
#      header is the top floor: it includes the shared types from the modules, never the reverse);
#   2. the app (app/, its client of servers app/remote/ included) reaches the engine only through
#      llamadesk/ headers.
# Usage: cmake -DROOT=<source dir> -P check_layers.cmake
set(problems "")
# Adds "<file>: <why>" to problems for each of files holding a line that matches regex.
function(flag files regex why)
    foreach(f ${files})
        file(STRINGS ${f} hits REGEX "${regex}")
        if(hits)
            list(APPEND problems "${f}: ${why} (${hits})")
        endif()
    endforeach()
    set(problems ${problems} PARENT_SCOPE)
endfunction()
set(modules core model readers synthetic tokenizer cache sampling chat backends)
foreach(module ${modules})
    file(GLOB_RECURSE files ${ROOT}/engine/src/${module}/*.h ${ROOT}/engine/src/${module}/*.cpp
         ${ROOT}/engine/src/${module}/*.cu ${ROOT}/engine/src/${module}/*.cuh)
    flag("${files}" "^#include \"llamadesk/engine.h\"" "includes the public header from below it")
endforeach()
string(JOIN "|" internal ${modules} engine)
# app/ and every folder under it, the client of servers (app/remote/) included. A folder without
# sources means the check looks in the wrong place: that fails too, rather than passing unseen.
foreach(dir app app/remote)
    file(GLOB_RECURSE files ${ROOT}/${dir}/*.h ${ROOT}/${dir}/*.cpp)
    if(NOT files)
        list(APPEND problems "${ROOT}/${dir}/: no sources found (moved? update check_layers.cmake)")
    endif()
endforeach()
file(GLOB_RECURSE files ${ROOT}/app/*.h ${ROOT}/app/*.cpp)
flag("${files}" "^#include \"(${internal})/" "includes the engine's insides")
if(problems)
    string(JOIN "\n  " text ${problems})
    message(FATAL_ERROR "layering broken:\n  ${text}")
endif()
message(STATUS "layers hold: ${modules} below llamadesk/engine.h; app/ (with app/remote/) uses only llamadesk/")
