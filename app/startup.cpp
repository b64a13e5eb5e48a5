#include "startup.h"

#include <QCommandLineParser>
#include <QFileInfo>

#include "app_settings.h"

StartupOptions parse_startup_options(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription("LlamaDesk: chat with a Llama 2 model on this machine.");
    parser.addHelpOption();
    const QCommandLineOption model("model", "Checkpoint file or folder to open.", "path");
    const QCommandLineOption tokenizer("tokenizer", "Tokenizer file for that checkpoint.", "path");
    const QCommandLineOption screenshot("screenshot", "Answer --prompt, save the window as PNG, quit.",
                                        "path");
    const QCommandLineOption prompt("prompt", "The question asked for --screenshot.", "text",
                                    "Once upon a time, a brave little dog");
    parser.addOptions({model, tokenizer, screenshot, prompt});
    parser.process(arguments);
    return {parser.value(model), parser.value(tokenizer), parser.value(screenshot), parser.value(prompt)};
}

QString startup_model(const StartupOptions& options, const AppSettings& settings) {
    if (!options.model.isEmpty())
        return options.model;
    if (const QString last = settings.lastModel(); !last.isEmpty() && QFileInfo::exists(last))
        return last;
    if (const QString env = qEnvironmentVariable("LLAMADESK_MODEL"); !env.isEmpty())
        return env;
    const QString bundled = QStringLiteral(LLAMADESK_SOURCE_DIR "/../shared/models/stories260K");
    return QFileInfo::exists(bundled) ? QFileInfo(bundled).canonicalFilePath() : QString();
}
