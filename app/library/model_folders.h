// Where checkpoints already lie on this computer: the folders each app keeps its models in, as
// those apps resolve them on Linux. Nothing here reads a folder; model_scan.h does.
#pragma once

#include <QList>
#include <QString>
#include <QStringList>

namespace llamadesk::library {

// Which app a model on disk came from; the order is the order of the list "On this computer".
enum class ModelSource { Recent, OwnFolder, HuggingFace, LmStudio, Gpt4All, Ollama };

// "Opened before", "LlamaDesk's models folder", "Hugging Face cache", "LM Studio", "GPT4All", "Ollama".
QString source_name(ModelSource source);

struct ModelFolder {
    ModelSource source;
    QString path;
};

// The places to look, from the environment the apps themselves read:
// - the Hugging Face cache: $HF_HUB_CACHE, else $HF_HOME/hub, else ~/.cache/huggingface/hub
//   (huggingface_hub's constants.py; XDG_CACHE_HOME stands in for ~/.cache, as there);
// - LM Studio: ~/.lmstudio/models, and ~/.cache/lm-studio/models of its older versions;
// - GPT4All: $XDG_DATA_HOME/nomic.ai/GPT4All (~/.local/share/...), its default on Linux;
// - Ollama: $OLLAMA_MODELS, else ~/.ollama/models and the system service's
//   /usr/share/ollama/.ollama/models;
// - own_folder: LlamaDesk's own models folder (empty: none).
// Folders that do not exist are included: the scan skips them.
QList<ModelFolder> model_folders(const QString& own_folder);

// LlamaDesk's own models folder in its data folder: <data_dir>/models.
QString own_models_folder(const QString& data_dir);

// The Hugging Face cache folder alone (downloads go there).
QString hugging_face_cache();

}  // namespace llamadesk::library
