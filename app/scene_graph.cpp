#include "scene_graph.h"

#include <QOffscreenSurface>
#include <QOpenGLContext>
#include <QOpenGLFunctions>
#include <QQuickWindow>

bool is_software_opengl(const QString& renderer) {
    // Mesa's software drivers, by the names they report
    for (const char* name : {"llvmpipe", "softpipe", "swrast", "Software Rasterizer"})
        if (renderer.contains(QLatin1String(name), Qt::CaseInsensitive))
            return true;
    return false;
}

namespace {

QString opengl_renderer() {
    QOffscreenSurface surface;
    surface.create();
    QOpenGLContext context;
    if (!context.create() || !context.makeCurrent(&surface))
        return {};
    const auto* name = reinterpret_cast<const char*>(context.functions()->glGetString(GL_RENDERER));
    const QString renderer = name ? QString::fromLatin1(name) : QString();
    context.doneCurrent();
    return renderer;
}

}  // namespace

QString choose_scene_graph() {
    if (qEnvironmentVariableIsSet("QT_QUICK_BACKEND") || qEnvironmentVariableIsSet("QSG_RHI_BACKEND"))
        return QStringLiteral("drawing with the renderer the environment names");
    const QString renderer = opengl_renderer();
    if (!is_software_opengl(renderer))
        return QStringLiteral("drawing with OpenGL (%1)").arg(renderer.isEmpty() ? "no renderer named" : renderer);
    QQuickWindow::setGraphicsApi(QSGRendererInterface::Software);
    return QStringLiteral("OpenGL is %1, a software rasterizer: drawing with Qt Quick's software renderer "
                          "(QT_QUICK_BACKEND=rhi draws with OpenGL instead)").arg(renderer);
}
