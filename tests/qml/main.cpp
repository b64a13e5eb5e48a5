// Qt Quick Test runner for tst_*.qml: gives the QML tests a real AppContext (worker thread and
// engine) as `testApp`, with data and settings in a temporary folder.
#include <QDir>
#include <QFile>
#include <QQmlContext>
#include <QQmlEngine>
#include <QQuickStyle>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtQml/QQmlExtensionPlugin>
#include <QtQuickTest>
#include <memory>

#include "app_context.h"
#include "synthetic/synthetic_model.h"
#include "test_support.h"

Q_IMPORT_QML_PLUGIN(LlamaDeskCorePlugin)
Q_IMPORT_QML_PLUGIN(LlamaDeskUiPlugin)

class Setup : public QObject {
    Q_OBJECT
public slots:
    void applicationAvailable() {
        QStandardPaths::setTestModeEnabled(true);
        QQuickStyle::setStyle("Basic");
    }

    void qmlEngineAvailable(QQmlEngine* engine) {
        // One application object for the whole run, as in the real program.
        if (!app_) {
            app_ = std::make_unique<AppContext>(AppPaths{dir_.path() + "/data", dir_.path() + "/settings.ini"});
            app_->start(llamadesk::test::shared_path("models/stories260K"));
            QFile broken(dir_.path() + "/broken.gguf");
            broken.open(QIODevice::WriteOnly);
            broken.write(QByteArray("GGUF\x03\x00\x00\x00", 8) + QByteArray(64, '\xff'));
            llamadesk::write_gguf(llamadesk::make_synthetic_checkpoint(llamadesk::synthetic_config("260K"),
                                                                       llamadesk::DType::Q8_0, 1),
                                  (dir_.path() + "/q8_0.gguf").toStdString());
            // A checkpoint in LlamaDesk's own models folder, for the Models page.
            QDir().mkpath(app_->library()->ownFolder());
            llamadesk::write_gguf(llamadesk::make_synthetic_checkpoint(llamadesk::synthetic_config("260K"),
                                                                       llamadesk::DType::F32, 2),
                                  (app_->library()->ownFolder() + "/own-model.gguf").toStdString());
        }
        engine->addImportPath("qrc:/");  // where the LlamaDesk modules' qmldir files live
        engine->rootContext()->setContextProperty("testApp", app_.get());
        engine->rootContext()->setContextProperty("modelPath", llamadesk::test::shared_path("models/stories260K"));
        engine->rootContext()->setContextProperty("brokenModelPath", dir_.path() + "/broken.gguf");
        engine->rootContext()->setContextProperty("quantizedModelPath", dir_.path() + "/q8_0.gguf");
        engine->rootContext()->setContextProperty("scratchFolder", dir_.path() + "/scratch");
    }

    void cleanupTestCase() { app_.reset(); }

private:
    QTemporaryDir dir_;
    std::unique_ptr<AppContext> app_;
};

QUICK_TEST_MAIN_WITH_SETUP(test_qml_window, Setup)

#include "main.moc"
