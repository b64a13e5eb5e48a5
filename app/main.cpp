// LlamaDesk: the desktop window. Builds the application objects and hands them to the QML root.
#include <QGuiApplication>
#include <QQmlApplicationEngine>
#include <QQuickStyle>
#include <QTemporaryDir>
#include <QtQml/QQmlExtensionPlugin>

#include "app_context.h"
#include "screenshot.h"
#include "startup.h"

Q_IMPORT_QML_PLUGIN(LlamaDeskCorePlugin)
Q_IMPORT_QML_PLUGIN(LlamaDeskUiPlugin)

int main(int argc, char* argv[]) {
    QGuiApplication application(argc, argv);
    application.setOrganizationName("LlamaDesk");
    application.setApplicationName("LlamaDesk");
    QQuickStyle::setStyle("Basic");
    const StartupOptions options = parse_startup_options(application.arguments());

    QTemporaryDir scratch;  // --screenshot starts from no saved conversations and default settings
    AppContext app(options.screenshot.isEmpty() ? AppPaths::standard()
                                                : AppPaths{scratch.path(), scratch.path() + "/settings.ini"});
    QQmlApplicationEngine engine;
    engine.addImportPath("qrc:/");  // where the LlamaDesk modules' qmldir files live
    engine.setInitialProperties({{"app", QVariant::fromValue(&app)}});
    engine.load(QUrl("qrc:/LlamaDesk/Main.qml"));
    if (engine.rootObjects().isEmpty())
        return 1;
    if (!options.screenshot.isEmpty())
        capture_screenshot_after_answer(&engine, &app, options.prompt, options.screenshot);
    app.start(startup_model(options, *app.settings()), options.tokenizer);
    return application.exec();
}
