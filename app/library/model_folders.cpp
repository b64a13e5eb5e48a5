#include "model_folders.h"

#include <QDir>
#include <QProcessEnvironment>

namespace llamadesk::library {

namespace {

QString env(const char* name) { return QProcessEnvironment::systemEnvironment().value(name); }

QString xdg(const char* variable, const char* fallback) {
    const QString value = env(variable);
    return value.isEmpty() ? QDir::homePath() + "/" + fallback : value;
}

}  // namespace

QString source_name(ModelSource source) {
    switch (source) {
    case ModelSource::Recent: return "Opened before";
    case ModelSource::OwnFolder: return "LlamaDesk's models folder";
    case ModelSource::HuggingFace: return "Hugging Face cache";
    case ModelSource::LmStudio: return "LM Studio";
    case ModelSource::Gpt4All: return "GPT4All";
    case ModelSource::Ollama: return "Ollama";
    }
    return {};
}

QString own_models_folder(const QString& data_dir) { return data_dir.isEmpty() ? QString() : data_dir + "/models"; }

QString hugging_face_cache() {
    if (const QString hub = env("HF_HUB_CACHE"); !hub.isEmpty()) return hub;
    if (const QString home = env("HF_HOME"); !home.isEmpty()) return home + "/hub";
    return xdg("XDG_CACHE_HOME", ".cache") + "/huggingface/hub";
}

QList<ModelFolder> model_folders(const QString& own_folder) {
    QList<ModelFolder> folders;
    if (!own_folder.isEmpty()) folders.append({ModelSource::OwnFolder, own_folder});
    folders.append({ModelSource::HuggingFace, hugging_face_cache()});
    folders.append({ModelSource::LmStudio, QDir::homePath() + "/.lmstudio/models"});
    folders.append({ModelSource::LmStudio, xdg("XDG_CACHE_HOME", ".cache") + "/lm-studio/models"});
    folders.append({ModelSource::Gpt4All, xdg("XDG_DATA_HOME", ".local/share") + "/nomic.ai/GPT4All"});
    if (const QString ollama = env("OLLAMA_MODELS"); !ollama.isEmpty()) {
        folders.append({ModelSource::Ollama, ollama});
    } else {
        folders.append({ModelSource::Ollama, QDir::homePath() + "/.ollama/models"});
        folders.append({ModelSource::Ollama, "/usr/share/ollama/.ollama/models"});
    }
    return folders;
}

}  // namespace llamadesk::library
