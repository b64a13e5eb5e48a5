// LlamaDesk: the desktop window. Builds the application objects and hands them to the QML root.
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QQuickWindow>
#include <QTemporaryDir>
#include <QtQml/QQmlExtensionPlugin>
#include <cstdio>

#include "app_context.h"
#include "models/screenshot.h"
#include "profile_lock.h"
#include "scene_graph.h"
#include "startup.h"

Q_IMPORT_QML_PLUGIN(LlamaDeskCorePlugin)
Q_IMPORT_QML_PLUGIN(LlamaDeskUiPlugin)

int main(int argc, char* argv[]) {
    QGuiApplication application(argc, argv);
    application.setOrganizationName("LlamaDesk");
    application.setApplicationName("LlamaDesk");
    QQuickStyle::setStyle("Basic");
    qInfo("LlamaDesk: %s", qPrintable(choose_scene_graph()));
    const StartupOptions options = parse_startup_options(application.arguments());

    QTemporaryDir scratch;  // --screenshot starts from no saved conversations and default settings
    const AppPaths paths = options.screenshot.isEmpty()
                               ? AppPaths::standard()
                               : AppPaths{scratch.path(), scratch.path() + "/settings.ini"};
    ProfileLock lock(paths.data_dir);
    if (!lock.acquire()) {
        const bool raised = lock.activateOwner();
        const QString message =
            QString("LlamaDesk is already open with this profile (process %1, %2).")
                .arg(lock.ownerPid()).arg(lock.lockPath()) +
            (raised ? " Its window was brought to the front." : " Close it before starting another.");
        std::fprintf(stderr, "%s\n", qPrintable(message));
        if (raised)
            return 0;
        // Started from a desktop menu there is no terminal: say it in a window.
        QQmlApplicationEngine engine;
        engine.addImportPath("qrc:/");
        engine.setInitialProperties({{"message", message}});
        engine.load(QUrl("qrc:/LlamaDesk/AlreadyOpen.qml"));
        return engine.rootObjects().isEmpty() ? 1 : application.exec();
    }

    AppContext app(paths);
    QQmlApplicationEngine engine;  // after app: the window goes before the objects it shows
    engine.addImportPath("qrc:/");  // where the LlamaDesk modules' qmldir files live
    engine.setInitialProperties({{"app", QVariant::fromValue(&app)}});
    engine.load(QUrl("qrc:/LlamaDesk/Main.qml"));
    if (engine.rootObjects().isEmpty())
        return 1;
    QObject::connect(&lock, &ProfileLock::activationRequested, &engine, [&engine] {
        qInfo("LlamaDesk: started again on this profile; showing this window instead");
        if (auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().value(0))) {
            window->showNormal();
            window->raise();
            window->requestActivate();
        }
    });
    if (!options.screenshot.isEmpty()) {
        // The picture keeps its size whatever screen the platform reports (offscreen: 800x800),
        // which the window would otherwise fit itself to.
        if (auto* window = qobject_cast<QQuickWindow*>(engine.rootObjects().first()))
            window->resize(1320, 820);
        capture_screenshot_after_answer(&engine, &app, options.prompt, options.screenshot);
    }
    app.start(startup_model(options, *app.settings()), options.tokenizer);
    return application.exec();
}
