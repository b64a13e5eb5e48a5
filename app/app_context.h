// Everything the window needs, made and wired in one place: the worker and the saver each on its
// own thread, the controllers and models on the GUI thread, and the queued connections between them. main() hands
// this object to the QML root as its required `app` property; tests make their own.
#pragma once

#include <QObject>
#include <QThread>
#include <QtQml/qqmlregistration.h>
#include <atomic>
#include <memory>

#include "conversations/conversation_list.h"
#include "conversations/conversation_saver.h"
#include "conversations/conversation_search.h"
#include "conversations/conversation_transfer.h"
#include "conversations/generation.h"
#include "conversations/message_composer.h"
#include "models/cache_inspector_model.h"
#include "models/chat_format_choice.h"
#include "models/figures.h"
#include "models/model_controller.h"
#include "library/model_library.h"
#include "server/local_server.h"
#include "settings/app_settings.h"
#include "settings/appearance.h"
#include "worker/cancel_flags.h"
#include "worker/inference_worker.h"

struct AppPaths {
    QString data_dir;       // conversations are saved under here, API keys in api-keys.json (0600)
    QString settings_file;  // empty: the platform's QSettings location
    static AppPaths standard();  // QStandardPaths::AppDataLocation and the default QSettings
};

class AppContext : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("made by main() or a test")
    Q_PROPERTY(ConversationList* conversations READ conversations CONSTANT)
    Q_PROPERTY(MessageComposer* composer READ composer CONSTANT)
    Q_PROPERTY(Generation* generation READ generation CONSTANT)
    Q_PROPERTY(ChatFormatChoice* format READ format CONSTANT)
    Q_PROPERTY(ModelController* model READ model CONSTANT)
    Q_PROPERTY(Figures* figures READ figures CONSTANT)
    Q_PROPERTY(CacheInspectorModel* inspector READ inspector CONSTANT)
    Q_PROPERTY(AppSettings* settings READ settings CONSTANT)
    Q_PROPERTY(Appearance* appearance READ appearance CONSTANT)
    Q_PROPERTY(ConversationSearch* search READ search CONSTANT)
    Q_PROPERTY(ConversationTransfer* transfer READ transfer CONSTANT)
    Q_PROPERTY(LocalServer* server READ server CONSTANT)
    Q_PROPERTY(ModelLibrary* library READ library CONSTANT)
    Q_PROPERTY(QString errorMessage READ errorMessage NOTIFY errorChanged)
public:
    explicit AppContext(const AppPaths& paths, QObject* parent = nullptr);
    ~AppContext() override;

    ConversationList* conversations() { return conversations_.get(); }
    MessageComposer* composer() { return composer_.get(); }
    Generation* generation() { return generation_.get(); }
    ChatFormatChoice* format() { return format_.get(); }
    ModelController* model() { return model_.get(); }
    Figures* figures() { return figures_.get(); }
    CacheInspectorModel* inspector() { return inspector_.get(); }
    AppSettings* settings() { return settings_.get(); }
    Appearance* appearance() { return appearance_.get(); }
    ConversationSearch* search() { return search_.get(); }
    ConversationTransfer* transfer() { return transfer_.get(); }
    LocalServer* server() { return server_.get(); }
    ModelLibrary* library() { return library_.get(); }
    // Only for connecting to its signals; its slots run on the worker thread.
    InferenceWorker* worker() { return worker_.get(); }
    QString errorMessage() const { return error_; }
    // The conversations' Stop flags the engine reads once per token (Generation::stop raises
    // one); exposed for tests.
    CancelFlags* cancelFlags() { return &cancel_; }

    // Restores saved conversations and loads modelPath (nothing: the welcome screen shows).
    void start(const QString& modelPath, const QString& tokenizer = {});

    Q_INVOKABLE void dismissError();
    void showError(const QString& message);

signals:
    void errorChanged();
    // To the worker: where KV snapshots go and how much disk they may take (0: none).
    void requestSnapshots(const QString& folder, qint64 budgetBytes);

private:
    void wire();
    // Hands the snapshot folder and the settings' disk budget to the worker when the budget changes.
    void applySnapshotSettings();

    CancelFlags cancel_;
    ApiKeyStore keys_;
    std::unique_ptr<AppSettings> settings_;
    std::unique_ptr<ConversationList> conversations_;
    std::unique_ptr<Generation> generation_;
    std::unique_ptr<MessageComposer> composer_;
    std::unique_ptr<ChatFormatChoice> format_;
    std::unique_ptr<Appearance> appearance_;
    std::unique_ptr<ConversationSearch> search_;
    std::unique_ptr<ConversationTransfer> transfer_;
    std::unique_ptr<ModelController> model_;
    std::unique_ptr<Figures> figures_;
    std::unique_ptr<CacheInspectorModel> inspector_;
    QThread thread_;
    std::unique_ptr<InferenceWorker> worker_;
    std::unique_ptr<LocalServer> server_;  // after the worker: it connects to it
    std::unique_ptr<ModelLibrary> library_;
    QThread storage_thread_;
    std::unique_ptr<ConversationSaver> saver_;
    QString snapshot_dir_;          // the data folder's kv-snapshots
    qint64 snapshot_budget_ = -1;   // the budget the worker has; -1: none given yet
    QString error_;
    QString save_error_;  // the saver's last failure, cleared from the window when saves succeed again
};
