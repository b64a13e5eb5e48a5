# The .deb (installer/package.sh): what goes in besides the programs and the built-in model, and
# CPack's settings. Included when LLAMADESK_PACKAGE is on; needs rsvg-convert and gzip.
set(pkg ${CMAKE_CURRENT_LIST_DIR})
set(app_id org.llamadesk.LlamaDesk)

install(FILES ${pkg}/${app_id}.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${pkg}/${app_id}.metainfo.xml DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)
install(FILES ${pkg}/${app_id}.svg DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
find_program(RSVG_CONVERT rsvg-convert REQUIRED)
set(icons)
foreach(size 48 64 128 256)
    set(png ${CMAKE_BINARY_DIR}/icons/${size}/${app_id}.png)
    add_custom_command(OUTPUT ${png}
        COMMAND ${CMAKE_COMMAND} -E make_directory ${CMAKE_BINARY_DIR}/icons/${size}
        COMMAND ${RSVG_CONVERT} -w ${size} -h ${size} -o ${png} ${pkg}/${app_id}.svg
        DEPENDS ${pkg}/${app_id}.svg)
    install(FILES ${png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
    list(APPEND icons ${png})
endforeach()
# Debian wants its changelog compressed without a timestamp (gzip -n), so the package is reproducible.
set(changelog ${CMAKE_BINARY_DIR}/changelog.gz)
add_custom_command(OUTPUT ${changelog}
    COMMAND gzip -9nc ${pkg}/changelog > ${changelog}
    DEPENDS ${pkg}/changelog)
add_custom_target(package_files ALL DEPENDS ${icons} ${changelog})
# Debian looks for them under the package's name, not the project's.
install(FILES ${changelog} DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/llamadesk)
install(FILES ${pkg}/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/llamadesk)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME llamadesk)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "LlamaDesk developers <dev@llamadesk.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Chat with Llama 2 models on this computer")
string(CONCAT CPACK_PACKAGE_DESCRIPTION "LlamaDesk runs Llama-2-family models locally and shows their KV\n"
    "cache. It opens GGUF (float and quantized), llama2.c, Meta and Hugging\n"
    "Face checkpoints, and ships a small built-in model, LlamaDesk Guide,\n"
    "that explains the app.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Loaded at run time, so dpkg-shlibdeps cannot see them: the window's QML modules and Qt's
# platform plugins.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "qt6-qpa-plugins, qml6-module-qtqml, qml6-module-qtqml-workerscript, \
qml6-module-qtquick, qml6-module-qtquick-window, qml6-module-qtquick-controls, \
qml6-module-qtquick-templates, qml6-module-qtquick-layouts, qml6-module-qtquick-dialogs, \
qml6-module-qt-labs-settings, qml6-module-qtcore, qml6-module-qt-labs-folderlistmodel")
# QtKeychain opens libsecret at run time to reach the desktop's keyring (Secret Service); without
# it API keys stay in a file only the user can read.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libsecret-1-0")
set(CPACK_STRIP_FILES ON)
include(CPack)
