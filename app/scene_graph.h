// Which renderer draws the window. On a software OpenGL (Mesa's llvmpipe in a VM, under Xvfb or a
// remote desktop) Qt Quick's OpenGL path kept every vertex buffer a long text ever needed inside
// the process: a 200,000-character paste, cleared, left about 290 MB resident. Qt Quick's own
// software renderer draws the same window in far less memory, so it is used there.
#pragma once

#include <QString>

// Whether an OpenGL renderer string (GL_RENDERER) names a software rasterizer.
bool is_software_opengl(const QString& renderer);

// Picks the renderer; after the QGuiApplication, before the first window. QT_QUICK_BACKEND or
// QSG_RHI_BACKEND in the environment choose instead. Returns what it says in the log.
QString choose_scene_graph();
