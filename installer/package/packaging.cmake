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
# Debian looks for them under each package's name, not the project's.
install(FILES ${changelog} ${pkg}/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/llamadesk)
if(LLAMADESK_HAVE_CUDA)
    install(FILES ${changelog} ${pkg}/copyright DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/llamadesk-cuda
            COMPONENT cuda)
endif()

# Two packages: llamadesk (the programs, CPU backend) and, in a build with CUDA, llamadesk-cuda (the
# backend as a module the engine opens when present), so llamadesk installs without NVIDIA's toolkit.
set(CPACK_GENERATOR DEB)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL llamadesk)
set(CPACK_PACKAGE_NAME llamadesk)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "LlamaDesk developers <dev@llamadesk.org>")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# Libraries no Debian package owns (NVIDIA's, installed from its own repository) are skipped here
# and named by hand below.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_STRIP_FILES ON)

set(CPACK_DEBIAN_LLAMADESK_PACKAGE_NAME llamadesk)
string(CONCAT CPACK_DEBIAN_LLAMADESK_DESCRIPTION "Chat with Llama 2 models on this computer\n"
    "LlamaDesk runs Llama-2-family models locally and shows their KV\n"
    "cache. It opens GGUF (float and quantized), llama2.c, Meta and Hugging\n"
    "Face checkpoints, and ships a small built-in model, LlamaDesk Guide,\n"
    "that explains the app. Install llamadesk-cuda to run on an NVIDIA GPU.")
# Loaded at run time, so dpkg-shlibdeps cannot see them: the window's QML modules and Qt's
# platform plugins.
set(CPACK_DEBIAN_LLAMADESK_PACKAGE_DEPENDS "qt6-qpa-plugins, qml6-module-qtqml, qml6-module-qtqml-workerscript, \
qml6-module-qtquick, qml6-module-qtquick-window, qml6-module-qtquick-controls, \
qml6-module-qtquick-templates, qml6-module-qtquick-layouts, qml6-module-qtquick-dialogs, \
qml6-module-qt-labs-settings, qml6-module-qtcore, qml6-module-qt-labs-folderlistmodel")
# QtKeychain opens libsecret at run time to reach the desktop's keyring (Secret Service); without
# it API keys stay in a file only the user can read. Qt's GTK platform theme gives the desktop's
# own file dialogs on a GTK desktop; without it Qt draws its own.
set(CPACK_DEBIAN_LLAMADESK_PACKAGE_RECOMMENDS "libsecret-1-0, qt6-gtk-platformtheme")
if(LLAMADESK_HAVE_CUDA)
    list(APPEND CPACK_COMPONENTS_ALL cuda)
    set(CPACK_DEBIAN_CUDA_PACKAGE_NAME llamadesk-cuda)
    string(CONCAT CPACK_DEBIAN_CUDA_DESCRIPTION "NVIDIA GPU backend for LlamaDesk\n"
        "The CUDA backend of LlamaDesk (cuBLAS and LlamaDesk's own kernels), a\n"
        "module that LlamaDesk opens at start when it is installed. Without it,\n"
        "or without a usable GPU, LlamaDesk runs on the CPU and says why.")
    # The module must come from the same build as the programs (the engine checks), and it needs the
    # CUDA runtime and cuBLAS it was built with, as NVIDIA's repository names them.
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" cuda_version "${CUDAToolkit_VERSION}")
    string(REPLACE "." "-" cuda_version "${cuda_version}")
    set(CPACK_DEBIAN_CUDA_PACKAGE_DEPENDS
        "llamadesk (= ${PROJECT_VERSION}), cuda-cudart-${cuda_version}, libcublas-${cuda_version}")
endif()
include(CPack)
