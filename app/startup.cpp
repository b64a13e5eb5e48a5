#include "startup.h"

#include <QCommandLineParser>
#include <QFileInfo>

#include "endpoint.h"
#include "llamadesk/builtin_model.h"
#include "settings/app_settings.h"

StartupOptions parse_startup_options(const QStringList& arguments) {
    QCommandLineParser parser;
    parser.setApplicationDescription("LlamaDesk: chat with a Llama 2 model on this machine.");
    parser.addHelpOption();
    const QCommandLineOption model("model", "Checkpoint file or folder to open.", "path");
    const QCommandLineOption tokenizer("tokenizer", "Tokenizer file for that checkpoint.", "path");
    const QCommandLineOption screenshot("screenshot", "Answer --prompt, save the window as PNG, quit.",
                                        "path");
    const QCommandLineOption prompt("prompt", "The question asked for --screenshot.", "text",
                                    "What is a KV cache?");
    parser.addOptions({model, tokenizer, screenshot, prompt});
    parser.process(arguments);
    return {parser.value(model), parser.value(tokenizer), parser.value(screenshot), parser.value(prompt)};
}

QString startup_model(const StartupOptions& options, const AppSettings& settings) {
    if (!options.model.isEmpty())
        return options.model;
    // A server is tried again as a file is; one that does not answer says so in the window.
    if (const QString last = settings.lastModel();
        !last.isEmpty() && (QFileInfo::exists(last) || llamadesk::remote::is_remote_location(last)))
        return last;
    if (const QString env = qEnvironmentVariable("LLAMADESK_MODEL"); !env.isEmpty())
        return env;
    return QString::fromStdString(llamadesk::builtin_model_path());
}
