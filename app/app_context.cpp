#include "app_context.h"

#include <QCoreApplication>
#include <QStandardPaths>

AppPaths AppPaths::standard() {
    return {QStandardPaths::writableLocation(QStandardPaths::AppDataLocation), QString()};
}

AppContext::AppContext(const AppPaths& paths, QObject* parent)
    : QObject(parent),
      keys_(paths.data_dir + "/api-keys.json"),
      settings_(std::make_unique<AppSettings>(paths.settings_file)),
      chat_(std::make_unique<ChatController>(paths.data_dir, &settings_->store(), &cancel_)),
      appearance_(std::make_unique<Appearance>(&settings_->store())),
      search_(std::make_unique<ConversationSearch>(chat_->conversations())),
      transfer_(std::make_unique<ConversationTransfer>(chat_.get())),
      model_(std::make_unique<ModelController>(settings_.get(), &keys_)),
      figures_(std::make_unique<Figures>(chat_->conversations())),
      inspector_(std::make_unique<CacheInspectorModel>()),
      worker_(std::make_unique<InferenceWorker>(&cancel_)),
      saver_(std::make_unique<ConversationSaver>(paths.data_dir)),
      snapshot_dir_(paths.data_dir.isEmpty() ? QString() : paths.data_dir + "/kv-snapshots") {
    register_engine_metatypes();
    thread_.setObjectName("inference");
    worker_->moveToThread(&thread_);
    storage_thread_.setObjectName("storage");
    saver_->moveToThread(&storage_thread_);
    wire();
    thread_.start();
    storage_thread_.start();
}

void AppContext::applySnapshotSettings() {
    const qint64 budget = snapshot_dir_.isEmpty() ? 0 : qint64(settings_->kvSnapshotMiB()) * 1024 * 1024;
    if (budget == snapshot_budget_)
        return;
    snapshot_budget_ = budget;
    QMetaObject::invokeMethod(worker_.get(), "setSnapshots", Qt::QueuedConnection, Q_ARG(QString, snapshot_dir_),
                              Q_ARG(qint64, budget));
}

AppContext::~AppContext() {
    cancel_.raiseAll();  // answers in progress end at their next token
    thread_.quit();
    thread_.wait();
    // What the worker said last (the stopped answer's end) is delivered, so it is saved.
    QCoreApplication::sendPostedEvents(chat_.get());
    chat_->shutdown();
    worker_.reset();      // its thread has finished: nothing else can touch it now
    // Saves already asked for are written before we go (this call queues behind them), and
    // those that failed get one last try.
    QMetaObject::invokeMethod(saver_.get(), &ConversationSaver::finish, Qt::BlockingQueuedConnection);
    storage_thread_.quit();
    storage_thread_.wait();
    saver_.reset();
}

void AppContext::wire() {
    InferenceWorker* w = worker_.get();
    ChatController* chat = chat_.get();
    ModelController* model = model_.get();
    const auto q = Qt::QueuedConnection;

    // Requests: GUI thread -> worker thread.
    connect(model, &ModelController::requestLoad, w, &InferenceWorker::loadModel, q);
    connect(chat, &ChatController::requestGenerate, w, &InferenceWorker::generate, q);
    connect(chat, &ChatController::requestContinue, w, &InferenceWorker::continueAnswer, q);
    connect(chat, &ChatController::requestRestore, w, &InferenceWorker::restoreConversation, q);
    connect(chat, &ChatController::requestFormat, w, &InferenceWorker::setChatFormat, q);
    connect(chat, &ChatController::requestReset, w, &InferenceWorker::resetConversation, q);
    connect(chat, &ChatController::requestDelete, w, &InferenceWorker::deleteConversation, q);
    connect(chat, &ChatController::requestTruncate, w, &InferenceWorker::truncateTurns, q);
    connect(chat, &ChatController::requestDropOldest, w, &InferenceWorker::dropOldestTurns, q);
    connect(chat, &ChatController::requestMeasure, w, &InferenceWorker::measureTurn, q);
    connect(chat, &ChatController::requestPublish, w, &InferenceWorker::publish, q);

    // Results: worker thread -> GUI thread.
    connect(w, &InferenceWorker::loadProgress, model, &ModelController::onLoadProgress, q);
    // The conversations and figures learn of a new model before the model controller tells
    // the window (modelChanged), so nothing reacting to that sees the old model's format.
    connect(w, &InferenceWorker::historiesCleared, chat, &ChatController::restoreAll, q);
    connect(w, &InferenceWorker::modelLoaded, chat, &ChatController::onModelLoaded, q);
    connect(w, &InferenceWorker::modelLoaded, figures_.get(), &Figures::onModelLoaded, q);
    connect(w, &InferenceWorker::modelLoaded, model, &ModelController::onModelLoaded, q);
    connect(w, &InferenceWorker::loadFailed, model, &ModelController::onLoadFailed, q);
    connect(w, &InferenceWorker::tokenGenerated, chat, &ChatController::onTokenGenerated, q);
    connect(w, &InferenceWorker::generationFinished, chat, &ChatController::onGenerationFinished, q);
    connect(w, &InferenceWorker::statsChanged, chat, &ChatController::onStatsChanged, q);
    connect(w, &InferenceWorker::turnMeasured, chat, &ChatController::onTurnMeasured, q);
    connect(w, &InferenceWorker::generationStarted, figures_.get(), &Figures::onGenerationStarted, q);
    connect(w, &InferenceWorker::tokenGenerated, figures_.get(), &Figures::onTokenGenerated, q);
    connect(w, &InferenceWorker::generationFinished, figures_.get(), &Figures::onGenerationFinished, q);
    connect(w, &InferenceWorker::statsChanged, figures_.get(), &Figures::onStatsChanged, q);
    connect(w, &InferenceWorker::serverFiguresChanged, figures_.get(), &Figures::onServerFigures, q);
    connect(w, &InferenceWorker::cacheLayoutReady, inspector_.get(), &CacheInspectorModel::onCacheLayout, q);
    connect(w, &InferenceWorker::error, this, [this](const QString&, const QString& m) { showError(m); }, q);

    connect(chat, &ChatController::saveRequested, saver_.get(), &ConversationSaver::save, q);
    connect(chat, &ChatController::removeRequested, saver_.get(), &ConversationSaver::remove, q);
    connect(saver_.get(), &ConversationSaver::failed, this, [this](const QString& m) {
        save_error_ = m;
        showError(m);
    }, q);
    connect(saver_.get(), &ConversationSaver::recovered, this, [this] {
        if (error_ == save_error_)
            dismissError();
        save_error_.clear();
    }, q);

    // GUI-thread bookkeeping.
    connect(chat, &ChatController::currentChanged, this, [this] {
        figures_->setCurrentConversation(chat_->currentId());
        inspector_->setCurrentConversation(chat_->currentId());
    });
    connect(chat, &ChatController::requestDelete, inspector_.get(), &CacheInspectorModel::forget);
    connect(chat, &ChatController::requestDelete, figures_.get(), &Figures::forget);
    connect(chat, &ChatController::errorOccurred, this, &AppContext::showError);
    connect(transfer_.get(), &ConversationTransfer::failed, this, &AppContext::showError);
    connect(model, &ModelController::errorOccurred, this, &AppContext::showError);
}

void AppContext::start(const QString& modelPath, const QString& tokenizer) {
    applySnapshotSettings();  // before the first load, so restored conversations find their caches
    connect(settings_.get(), &AppSettings::changed, this, &AppContext::applySnapshotSettings);
    chat_->setDropOldestWhenFull(settings_->dropOldestWhenFull());
    connect(settings_.get(), &AppSettings::changed, chat_.get(),
            [this] { chat_->setDropOldestWhenFull(settings_->dropOldestWhenFull()); });
    chat_->loadSaved();
    if (!modelPath.isEmpty())
        model_->load(modelPath, tokenizer.isEmpty() ? settings_->tokenizerFor(modelPath) : tokenizer);
}

void AppContext::showError(const QString& message) {
    error_ = message;
    emit errorChanged();
}

void AppContext::dismissError() { showError(QString()); }
